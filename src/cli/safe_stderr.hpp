// Every message npu-doctor writes through std::cerr reaches the terminal with its control
// characters shown, never obeyed: a file, rank or rule name holding ESC [2J or a bidi override
// (from a hostile trace, a folder listing or the command line) cannot clear the screen, retitle
// the window or reorder the text. One filter at the stream, so no message can forget it.
#pragma once

namespace npud {

// Routes std::cerr through terminal_safe (newlines kept) for the rest of the process.
void make_stderr_terminal_safe();

}  // namespace npud
