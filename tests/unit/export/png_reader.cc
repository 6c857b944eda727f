// PNG decoding with zlib (png_reader.h): chunks → IDAT inflate → per-row unfilter.
#include "tests/unit/export/png_reader.h"

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

namespace ccltune::testing {
namespace {

std::uint32_t Be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

core::Result<std::vector<std::uint8_t>> Inflate(const std::vector<std::uint8_t>& in,
                                                std::size_t expected) {
  std::vector<std::uint8_t> out(expected);
  uLongf len = static_cast<uLongf>(out.size());
  if (uncompress(out.data(), &len, in.data(), static_cast<uLong>(in.size())) != Z_OK ||
      len != expected)
    return core::DataLoss("PNG image data does not inflate to the expected size");
  return out;
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

void Unfilter(std::uint8_t type, std::uint8_t* row, const std::uint8_t* prev, std::size_t n,
              int bpp) {
  for (std::size_t i = 0; i < n; ++i) {
    const int a = i >= static_cast<std::size_t>(bpp) ? row[i - bpp] : 0;
    const int b = prev ? prev[i] : 0;
    const int c = prev && i >= static_cast<std::size_t>(bpp) ? prev[i - bpp] : 0;
    int add = 0;
    if (type == 1)
      add = a;
    else if (type == 2)
      add = b;
    else if (type == 3)
      add = (a + b) / 2;
    else if (type == 4)
      add = Paeth(a, b, c);
    row[i] = static_cast<std::uint8_t>(row[i] + add);
  }
}

}  // namespace

core::Result<Image> ReadPng(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<std::uint8_t> d((std::istreambuf_iterator<char>(f)), {});
  if (d.size() < 33 || d[1] != 'P' || d[2] != 'N' || d[3] != 'G')
    return core::DataLoss(path + " is not a PNG");
  Image img;
  int color = 0, depth = 0, interlace = 0;
  std::vector<std::uint8_t> idat;
  for (std::size_t p = 8; p + 12 <= d.size();) {
    const std::uint32_t len = Be32(&d[p]);
    const std::string type(reinterpret_cast<const char*>(&d[p + 4]), 4);
    if (p + 12 + len > d.size()) return core::DataLoss(path + ": truncated chunk " + type);
    const std::uint8_t* body = &d[p + 8];
    if (type == "IHDR") {
      img.width = static_cast<int>(Be32(body));
      img.height = static_cast<int>(Be32(body + 4));
      depth = body[8];
      color = body[9];
      interlace = body[12];
    } else if (type == "IDAT") {
      idat.insert(idat.end(), body, body + len);
    }
    p += 12 + len;
  }
  if (depth != 8 || (color != 2 && color != 6) || interlace != 0)
    return core::DataLoss(path + ": only 8-bit RGB/RGBA non-interlaced PNGs are supported");
  const int bpp = color == 6 ? 4 : 3;
  const std::size_t stride = static_cast<std::size_t>(img.width) * bpp;
  CCLTUNE_ASSIGN_OR_RETURN(auto raw, Inflate(idat, (stride + 1) * img.height));
  img.rgba.resize(static_cast<std::size_t>(img.width) * img.height * 4);
  for (int y = 0; y < img.height; ++y) {
    std::uint8_t* row = &raw[y * (stride + 1) + 1];
    Unfilter(raw[y * (stride + 1)], row, y > 0 ? row - (stride + 1) : nullptr, stride, bpp);
    for (int x = 0; x < img.width; ++x)
      for (int c = 0; c < 4; ++c)
        img.rgba[(static_cast<std::size_t>(y) * img.width + x) * 4 + c] =
            c < bpp ? row[x * bpp + c] : 255;
  }
  return img;
}

RegionStats Region(const Image& img, int x, int y, int w, int h) {
  double sum = 0, sum2 = 0, inked = 0, n = 0;
  for (int j = std::max(0, y); j < std::min(img.height, y + h); ++j) {
    for (int i = std::max(0, x); i < std::min(img.width, x + w); ++i) {
      const auto* p = &img.rgba[(static_cast<std::size_t>(j) * img.width + i) * 4];
      const double l = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      sum += l;
      sum2 += l * l;
      if (p[0] < 235 || p[1] < 235 || p[2] < 235) ++inked;
      ++n;
    }
  }
  if (n == 0) return {};
  const double mean = sum / n;
  return {std::sqrt(std::max(0.0, sum2 / n - mean * mean)), inked / n};
}

}  // namespace ccltune::testing
