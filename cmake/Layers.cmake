# The folders of src/ as layers (docs/design.md, "Layers"). Each entry is "folder:folders it
# builds on" (comma-separated); a folder may include the headers of those folders and of
# everything below them, never of a folder above. Each folder is one static library, npud_<folder>, that links only
# the libraries named here (the top CMakeLists.txt), and cmake/CheckLayers.cmake fails the build
# (and the ctest `layers`) on an include that breaks this order, headers included: a cycle
# between two folders cannot come back unseen. Below comes first: a folder may name only
# folders listed before it. A new folder of src/ must be listed here.
set(NPUD_LAYERS
  "util:"                        # files, text, terminal, embedded data; InputError
  "model:util"                   # Trace, Finding, RuleFilter: what readers fill and rules emit
  "ingest:model"                 # trace readers: formats in, Trace out
  "knowledge:util"               # torch_npu op lists, dispatch facts, library advice (embedded data)
  "numeric:ingest"               # tensor dumps and their comparison (`compare`)
  "env:knowledge"                # `env`: the machine's packages and devices
  "analysis:knowledge,model"     # TraceIndex, names, intervals, AMP drift: derived from a Trace
  "graph:analysis"               # dataflow graph, fused-op pattern matching, optimizer loops
  "source:knowledge,model"       # Python source: the static scan, snippets, suppression comments
  "rules:graph,source"           # the trace rules, their registry and AnalysisContext
  "pipeline:rules"               # a read Trace analysed into a Report: knowledge, rules, suppressions, baseline
  "report:pipeline,env,numeric"  # text/JSON/SARIF/HTML renderers: reports of analyses, scan, compare, env
  "cluster:report,ingest"        # `cluster`: per-rank analyses compared, and its pages
  "diff:report,ingest"           # `diff`: two traces or reports compared, and its pages
  "cli:cluster,diff,env,numeric" # the commands
)

# Sets <out> to the folders <folder> builds on directly, as listed in NPUD_LAYERS.
function(npud_layer_deps folder out)
  foreach(entry ${NPUD_LAYERS})
    string(REGEX REPLACE "[:,]" ";" parts "${entry}")
    list(POP_FRONT parts name)
    if(name STREQUAL folder)
      set(${out} "${parts}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "npu-doctor: src/${folder} is not a layer of cmake/Layers.cmake")
endfunction()

# Sets <out> to the layers in order, bottom first.
function(npud_layer_names out)
  set(names)
  foreach(entry ${NPUD_LAYERS})
    string(REGEX REPLACE ":.*" "" name "${entry}")
    list(APPEND names ${name})
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
