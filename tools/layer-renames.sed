# Include renames of issue 32's folder layering (docs/design.md, "Layers"). Apply to a branch
# made before it: git grep -lE 'input_error|finding.hpp|rule_filter|source_snippet|suppressions|pattern_rule' -- src tests fuzz bench docs | xargs sed -i -f tools/layer-renames.sed
s|ingest/input_error\.|util/input_error.|g
s|rules/finding\.|model/finding.|g
s|rules/rule_filter\.|model/rule_filter.|g
s|report/source_snippet\.|source/source_snippet.|g
s|rules/suppressions\.|source/suppressions.|g
s|graph/pattern_rule\.hpp|rules/pattern_rule.hpp|g
s|analysis/context\.cpp|rules/analysis_context.cpp|g
