"""CPython's command line, as far as npu-doctor reads it (`python --help`): which options take a
value, and where the program starts. One list for the shim (_autostart: is this process a
`python -m LAUNCHER`?) and the binary (src/cli/python_options.hpp, generated from this file by
tools/gen_python_options.py and checked by the unit test PythonOptions.GeneratedHeaderUpToDate:
does `run -- python -E ...` hide the shim?)."""

# Short options that take a value: the rest of their word (-Wignore, -Xdev) or, when that is
# empty, the next word (-W ignore, -X dev). They may end a cluster of flags (-uW ignore).
SHORT_WITH_VALUE = "WX"
# Short options after which the program follows: -c COMMAND, -m MODULE (same spellings).
SHORT_PROGRAM = "cm"
# Long options whose value is the next word.
LONG_WITH_VALUE = ("--check-hash-based-pycs",)


def program_start(argv):
    """How the interpreter command line argv (argv[0] the interpreter) names its program:
    ("-m", MODULE), ("-c", COMMAND), ("script", PATH) or None (none: stdin, or argv ends)."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return ("script", argv[i + 1]) if i + 1 < len(argv) else None
        if a.startswith("--"):
            if a in LONG_WITH_VALUE:
                i += 1
        elif a.startswith("-") and len(a) > 1:
            for k in range(1, len(a)):
                if a[k] in SHORT_PROGRAM:
                    value = a[k + 1:] or (argv[i + 1] if i + 1 < len(argv) else None)
                    return ("-" + a[k], value) if value is not None else None
                if a[k] in SHORT_WITH_VALUE:
                    if k + 1 == len(a):
                        i += 1
                    break
        else:
            return "script", a   # the script, or `-` (stdin)
        i += 1
    return None
