// A tiny PNG decoder for checking screenshots: 8-bit RGB or RGBA, non-interlaced (what
// Chromium's --screenshot writes). Returns RGBA pixels; an error names what it cannot read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace ccltune::testing {

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgba;  // row-major, 4 bytes per pixel
};

core::Result<Image> ReadPng(const std::string& path);

// Standard deviation of the luma of pixels in [x, x+w) × [y, y+h) (clipped to the image),
// and the fraction of pixels that are not (near-)white: how much was drawn there.
struct RegionStats {
  double luma_stddev = 0;
  double inked_fraction = 0;
};
RegionStats Region(const Image& img, int x, int y, int w, int h);

}  // namespace ccltune::testing
