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
# Issue 43's floors (the pipeline below the renderers):
s|report/escape\.|util/escape.|g
s|report/json_writer\.|util/json_writer.|g
# report/report.hpp split: the Report struct and summarize() are pipeline/report.hpp, the
# render_* declarations, top_problems and summary_line report/render.hpp (by hand: include the
# one a file uses). where()/call_site()/site_key() moved from rules/rule_support.hpp to
# model/finding.hpp; cli/scan.cpp's renderers are report/scan_report.hpp, its fixes
# pipeline/scan_fixes.hpp; compare's and env's renderers report/compare_report.hpp and
# report/env_report.hpp; rules_or_report + analysis_settings are settings_or_report.
