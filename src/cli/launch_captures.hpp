// The capture folder of a launch (launch.cpp): the captures other processes and ranks of the
// program wrote there (capture.<pid>.npud.json, capture.rank<R>.npud.json), and its lock.
#pragma once

#include <string>
#include <vector>

namespace npud {

// The other processes' non-empty captures in dir, sorted by name.
std::vector<std::string> other_process_captures(const std::string& dir);

// The ranks' non-empty captures in dir, by rank.
std::vector<std::string> rank_captures(const std::string& dir);

// Two runs writing one capture directory would interleave their events into one capture and
// both report on the mixture: the directory is locked (flock on DIR/.npu-doctor.lock) from
// before the program starts until this process ends, and a second run is refused at once.
// False after printing why (another run holds the lock, or it cannot be taken).
bool lock_capture_dir(const std::string& dir);

}  // namespace npud
