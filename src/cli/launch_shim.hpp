// The capture shim's side of launching (launch.cpp): where its Python folder is, a link to it
// when that folder's path holds ':', and the Python options that would hide it from the program.
#pragma once

#include <string>
#include <vector>

namespace npud {

inline constexpr const char* kBootstrap = "npu_doctor/_bootstrap/sitecustomize.py";

// $NPUD_PYTHON_DIR, else the copy installed with the binary: `cmake --install` puts it in
// <prefix>/share/npu-doctor/python, a wheel in the site-packages of the prefix whose bin/
// holds the binary; else (a binary run from its build folder) the checkout's python/ next to
// that folder, or the source tree it was configured from (not compiled into wheels).
// `source_python_dir`: that source tree's python/, or nullptr (launch.cpp alone is compiled
// with NPUD_SOURCE_PYTHON_DIR, CMakeLists.txt).
std::string find_python_dir(std::string& tried, const char* source_python_dir);

// `python -E` / `-I` (also combined, `-sE`) ignores PYTHONPATH, which is how the shim gets
// into the program: the run would "succeed" with no capture and blame the program. The
// option that does it, or "" when the program is not such a Python.
std::string python_flag_hiding_the_shim(const std::vector<std::string>& program);

// PYTHONPATH splits at ':', so a shim under a folder whose path holds one (a legal name) would
// never load and the run would blame the program (issue 31 F-25). Such a shim is reached
// through a link: a fresh folder without ':' (under $TMPDIR, else /tmp) holding
// `npu_doctor` -> the package. The bootstrap finds the package as its own parent folder
// without resolving links, so it loads through the link. Removed (the link only) when the
// run ends.
class ShimLink {
 public:
  ShimLink() = default;
  ShimLink(const ShimLink&) = delete;
  ShimLink& operator=(const ShimLink&) = delete;
  ~ShimLink();
  // The folder to use in place of python_dir, or "" after printing why not.
  std::string make(const std::string& python_dir);

 private:
  std::string dir_;
};

}  // namespace npud
