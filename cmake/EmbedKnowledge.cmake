# PLACEHOLDER (replaced by the knowledge-base work): no embedded data yet.
set(NPUD_KNOWLEDGE_CPP "")
