# Include renames of issue 32's folder layering (docs/design.md, "Layers"). Apply to a branch
# made before it (the whole tree: sources, tests, docs, the shim's docstrings):
#   git grep -lE 'input_error|finding\.|rule_filter|source_snippet|suppressions\.|pattern_rule|analysis/context' \
#     -- . ':!tools/layer-renames.sed' | xargs sed -i -f tools/layer-renames.sed
s|ingest/input_error\.|util/input_error.|g
s|rules/finding\.|model/finding.|g
s|rules/rule_filter\.|model/rule_filter.|g
s|report/source_snippet\.|source/source_snippet.|g
s|rules/suppressions\.|source/suppressions.|g
s|graph/pattern_rule\.hpp|rules/pattern_rule.hpp|g
s|analysis/context\.cpp|rules/analysis_context.cpp|g
# Not renames, so by hand: render_diff_html / render_cluster_html are declared in
# diff/diff_html.hpp / cluster/cluster_html.hpp (no longer report/html_report.hpp);
# graph::report_pattern is declared in rules/pattern_rule.hpp; graph::report_optimizer_loops
# is FUSE007's own (rules/fuse007_optimizer_loop.cpp). cmake -DNPUD_SRC=src -P
# cmake/CheckLayers.cmake then names any include left that reaches up a layer.
