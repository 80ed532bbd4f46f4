// A header of the lowest layer that includes an upper one: cmake/CheckLayers.cmake must fail
// on it (the ctest layers.catches_upward_include).
#pragma once

#include "rules/rule.hpp"
