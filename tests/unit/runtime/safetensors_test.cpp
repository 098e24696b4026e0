// safetensors: round trips, the reference layout byte for byte, dtype conversions, and
// validation of damaged, truncated and hostile files.
#include "runtime/formats/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "tests/unit/runtime/TestFiles.h"

namespace stepc::rt {
namespace {

using testing::TempDir;

// A file image: the 8-byte little-endian length, the header text, the data.
std::vector<uint8_t> image(const std::string &header, const std::vector<uint8_t> &data = {}) {
  std::vector<uint8_t> out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
std::vector<uint8_t> rawBytes(const std::vector<T> &values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  SafetensorsFile file;
  Status status = SafetensorsFile::parse(bytes, "x.safetensors", file);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(file.tensors().empty());
  return status.message();
}

SafetensorsFile parseOk(const std::vector<uint8_t> &bytes) {
  SafetensorsFile file;
  Status status = SafetensorsFile::parse(bytes, "x.safetensors", file);
  EXPECT_TRUE(status.ok()) << status.message();
  return file;
}

TEST(Safetensors, RoundTripsF32TensorsAndMetadata) {
  TempDir tmp;
  std::vector<float> w = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f}, b = {7, 8, 9}, s = {42};
  Status status = writeSafetensors(tmp.path("p.safetensors"),
                                   {{"layer.w", DType::kF32, {2, 3}, w.data()},
                                    {"layer.b", DType::kF32, {3}, b.data()},
                                    {"scale", DType::kF32, {}, s.data()},
                                    {"empty", DType::kF32, {0, 4}, nullptr}},
                                   {{"format", "pt"}, {"note", "\"quoted\" é"}});
  ASSERT_TRUE(status.ok()) << status.message();
  SafetensorsFile file;
  status = SafetensorsFile::read(tmp.path("p.safetensors"), file);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(file.tensors().size(), 4u);
  EXPECT_EQ(file.tensors()[0].name, "empty");  // sorted by name
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.metadata().at("note"), "\"quoted\" é");
  std::vector<float> read;
  std::vector<int64_t> shape;
  ASSERT_TRUE(file.readFloats("layer.w", read, &shape).ok());
  EXPECT_EQ(read, w);
  EXPECT_TRUE(std::signbit(read[4]));
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(file.readFloats("scale", read, &shape).ok());
  EXPECT_EQ(read, s);
  EXPECT_TRUE(shape.empty());
  ASSERT_TRUE(file.readFloats("empty", read, &shape).ok());
  EXPECT_TRUE(read.empty());
  EXPECT_EQ(shape, (std::vector<int64_t>{0, 4}));
  std::vector<double> asDouble;
  ASSERT_TRUE(file.readDoubles("layer.b", asDouble).ok());
  EXPECT_EQ(asDouble, (std::vector<double>{7, 8, 9}));
  EXPECT_EQ(tmp.list(), std::vector<std::string>{"p.safetensors"});
}

// What the reference library (huggingface/safetensors, used by safetensors.torch.save_file)
// writes for these tensors: compact JSON, __metadata__ first, tensors by dtype (F64, F32, I32,
// F16 here) then name, the header padded with spaces to a multiple of 8.
TEST(Safetensors, WritesTheReferenceLayout) {
  TempDir tmp;
  std::vector<float> a = {1, 2}, z = {3};
  std::vector<double> c = {0.5};
  std::vector<uint16_t> h = {0x3c00, 0xc000};
  std::vector<int32_t> i = {-1};
  ASSERT_TRUE(writeSafetensors(tmp.path("r"),
                               {{"z", DType::kF32, {1}, z.data()},
                                {"h", DType::kF16, {2}, h.data()},
                                {"a", DType::kF32, {2}, a.data()},
                                {"i", DType::kI32, {1}, i.data()},
                                {"c", DType::kF64, {1, 1}, c.data()}},
                               {{"format", "pt"}})
                  .ok());
  std::string json = R"({"__metadata__":{"format":"pt"},)"
                     R"("c":{"dtype":"F64","shape":[1,1],"data_offsets":[0,8]},)"
                     R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                     R"("z":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},)"
                     R"("i":{"dtype":"I32","shape":[1],"data_offsets":[20,24]},)"
                     R"("h":{"dtype":"F16","shape":[2],"data_offsets":[24,28]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::vector<uint8_t> data = rawBytes(c);
  for (auto part : {rawBytes(a), rawBytes(z), rawBytes(i), rawBytes(h)})
    data.insert(data.end(), part.begin(), part.end());
  EXPECT_EQ(testing::readBytes(tmp.path("r")), image(json, data));
}

// A header as another writer may produce it: whitespace, members in any order, data in another
// order than the names, unknown extra fields in a tensor entry (ignored, as the reference does).
TEST(Safetensors, ReadsOtherWritersHeaders) {
  std::string header =
      "{\n  \"b\" : {\"data_offsets\": [0, 4], \"shape\": [1], \"dtype\": \"F32\", \"extra\": "
      "[1]},\n"
      "  \"__metadata__\": {\"format\": \"pt\"},\n"
      "  \"a\": {\"dtype\": \"F32\", \"shape\": [ 2 ], \"data_offsets\": [4, 12]}\n}\n";
  SafetensorsFile file = parseOk(image(header, rawBytes(std::vector<float>{9, 1, 2})));
  std::vector<float> a, b;
  ASSERT_TRUE(file.readFloats("a", a).ok());
  ASSERT_TRUE(file.readFloats("b", b).ok());
  EXPECT_EQ(a, (std::vector<float>{1, 2}));
  EXPECT_EQ(b, (std::vector<float>{9}));
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.find("c"), nullptr);
}

// Every half-precision bit pattern converts exactly: (-1)^s 2^(e-15) (1 + m/1024), subnormals
// 2^-14 (m/1024), infinities and NaNs.
TEST(Safetensors, ConvertsEveryF16Value) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < 65536; ++i) halves[i] = static_cast<uint16_t>(i);
  std::string header = R"({"h":{"dtype":"F16","shape":[65536],"data_offsets":[0,131072]}})";
  SafetensorsFile file = parseOk(image(header, rawBytes(halves)));
  std::vector<float> f;
  std::vector<double> d;
  ASSERT_TRUE(file.readFloats("h", f).ok());
  ASSERT_TRUE(file.readDoubles("h", d).ok());
  for (uint32_t i = 0; i < 65536; ++i) {
    int sign = i >> 15, exponent = (i >> 10) & 31, mantissa = i & 1023;
    double expected;
    if (exponent == 0)
      expected = std::ldexp(mantissa / 1024.0, -14);
    else if (exponent == 31)
      expected = mantissa ? NAN : INFINITY;
    else
      expected = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
    if (sign) expected = -expected;
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(f[i]) && std::isnan(d[i])) << i;
    } else {
      ASSERT_EQ(f[i], expected) << i;
      ASSERT_EQ(d[i], expected) << i;
      ASSERT_EQ(std::signbit(f[i]), sign == 1) << i;
    }
  }
}

TEST(Safetensors, ConvertsBf16AndF64) {
  std::vector<uint16_t> bf = {0x3f80, 0xc060, 0x0001, 0x7f80, 0xff80, 0x8000};
  std::vector<double> f64 = {0.1, -1e300, 1e300, 3.4028235677973366e38, 3.4028235e38, 1e-50};
  std::string header = R"({"b":{"dtype":"BF16","shape":[6],"data_offsets":[0,12]},)"
                       R"("d":{"dtype":"F64","shape":[2,3],"data_offsets":[12,60]}})";
  std::vector<uint8_t> data = rawBytes(bf), d = rawBytes(f64);
  data.insert(data.end(), d.begin(), d.end());
  SafetensorsFile file = parseOk(image(header, data));
  std::vector<float> f;
  ASSERT_TRUE(file.readFloats("b", f).ok());
  EXPECT_EQ(f[0], 1.0f);
  EXPECT_EQ(f[1], -3.5f);
  EXPECT_EQ(f[2], std::ldexp(1.0f, -133));  // the smallest bf16 subnormal
  EXPECT_EQ(f[3], INFINITY);
  EXPECT_EQ(f[4], -INFINITY);
  EXPECT_TRUE(std::signbit(f[5]));
  ASSERT_TRUE(file.readFloats("d", f).ok());
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(f[1], -INFINITY);  // overflow rounds to infinity, not undefined behaviour
  EXPECT_EQ(f[2], INFINITY);
  EXPECT_EQ(f[3], INFINITY);  // just past FLT_MAX + half an ulp
  EXPECT_EQ(f[4], 3.4028235e38f);
  EXPECT_EQ(f[5], 0.0f);
  std::vector<double> exact;
  ASSERT_TRUE(file.readDoubles("d", exact).ok());
  EXPECT_EQ(exact, f64);
}

TEST(Safetensors, CopiesRawTensorsOfExactlyTheExpectedType) {
  std::vector<int64_t> values = {1, -2, 3};
  SafetensorsFile file = parseOk(
      image(R"({"i":{"dtype":"I64","shape":[3],"data_offsets":[0,24]}})", rawBytes(values)));
  std::vector<int64_t> out(3);
  ASSERT_TRUE(file.copyTo("i", DType::kI64, {3}, out.data()).ok());
  EXPECT_EQ(out, values);
  EXPECT_EQ(file.copyTo("i", DType::kI32, {3}, out.data()).message(),
            "x.safetensors: tensor 'i' is [3] I64, expected [3] I32");
  EXPECT_EQ(file.copyTo("i", DType::kI64, {1, 3}, out.data()).message(),
            "x.safetensors: tensor 'i' is [3] I64, expected [1, 3] I64");
  EXPECT_EQ(file.copyTo("j", DType::kI64, {3}, out.data()).message(),
            "x.safetensors: no tensor named 'j'");
  std::vector<float> f;
  EXPECT_EQ(file.readFloats("i", f).message(),
            "x.safetensors: tensor 'i' is I64, not a floating-point type (F64, F32, F16, BF16)");
  EXPECT_EQ(file.readFloats("nope", f).message(), "x.safetensors: no tensor named 'nope'");
}

TEST(Safetensors, ReportsWhatIsWrongWithAFile) {
  auto one = [](const std::string &entry, size_t dataBytes = 8) {
    return image("{\"t\":" + entry + "}", std::vector<uint8_t>(dataBytes, 0));
  };
  EXPECT_EQ(
      parseError({1, 2, 3}),
      "x.safetensors: not a safetensors file: 3 bytes, too short for the 8-byte header length");
  EXPECT_EQ(parseError({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'}),
            "x.safetensors: not a safetensors file: header length 18446744073709551615 exceeds "
            "the limit of 100000000");
  EXPECT_EQ(parseError({20, 0, 0, 0, 0, 0, 0, 0, '{', '}'}),
            "x.safetensors: truncated: the header should be 20 bytes, the file holds only 2 after "
            "the length");
  EXPECT_EQ(parseError(image("{\"t\":}")),
            "x.safetensors: header: JSON byte 5: expected a value, found '}'");
  EXPECT_EQ(parseError(image("[]")), "x.safetensors: header: expected a JSON object");
  EXPECT_EQ(parseError(one(R"({"dtype":"F99","shape":[2],"data_offsets":[0,8]})")),
            "x.safetensors: tensor 't': unknown dtype 'F99'");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})")),
            "x.safetensors: tensor 't': expected non-negative integer dims in \"shape\"");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})")),
            "x.safetensors: tensor 't': expected non-negative integer dims in \"shape\"");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})")),
            "x.safetensors: tensor 't': expected \"data_offsets\" as [begin, end] byte offsets");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[2],"data_offsets":[8,0]})")),
            "x.safetensors: tensor 't': data_offsets end before they begin");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})")),
            "x.safetensors: tensor 't': shape [3] of F32 needs 12 bytes, data_offsets give 8");
  EXPECT_EQ(
      parseError(one(R"({"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]})")),
      "x.safetensors: tensor 't': shape [4611686018427387904, 8] is too large");
  EXPECT_EQ(parseError(one(R"({"shape":[2],"data_offsets":[0,8]})")),
            "x.safetensors: tensor 't': expected a string \"dtype\"");
  EXPECT_EQ(parseError(one(R"("F32")")),
            "x.safetensors: tensor 't': expected an object with dtype, shape and data_offsets");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", 4)),
            "x.safetensors: the tensors cover 8 bytes of data but the file holds 4 (truncated?)");
  EXPECT_EQ(
      parseError(one(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", 9)),
      "x.safetensors: the tensors cover 8 bytes of data but the file holds 9 (trailing bytes)");
  EXPECT_EQ(parseError(one(R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})")),
            "x.safetensors: tensor 't' starts at data byte 4, expected 0 (gap)");
  EXPECT_EQ(parseError(image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                             std::vector<uint8_t>(8))),
            "x.safetensors: tensor 'b' starts at data byte 4, expected 8 (overlap)");
  EXPECT_EQ(parseError(image(R"({"__metadata__":{"format":1}})")),
            "x.safetensors: __metadata__: 'format' is not a string");
  EXPECT_EQ(parseError(image(R"({"__metadata__":[]})")),
            "x.safetensors: __metadata__: expected an object of strings");
}

TEST(Safetensors, MissingFileIsNamed) {
  SafetensorsFile file;
  EXPECT_EQ(SafetensorsFile::read("/nonexistent/p.safetensors", file).message(),
            "/nonexistent/p.safetensors: no such file");
}

TEST(Safetensors, RefusesToWriteBadTensors) {
  TempDir tmp;
  float x = 1;
  auto writeError = [&](const std::vector<TensorView> &tensors) {
    Status status = writeSafetensors(tmp.path("w"), tensors);
    EXPECT_FALSE(status.ok());
    return status.message();
  };
  std::string p = tmp.path("w") + ": ";
  EXPECT_EQ(writeError({{"a", DType::kF32, {1}, &x}, {"a", DType::kF64, {0}, nullptr}}),
            p + "tensor name 'a' appears twice");
  EXPECT_EQ(writeError({{"__metadata__", DType::kF32, {1}, &x}}),
            p + "tensor name '__metadata__' is reserved or empty");
  EXPECT_EQ(writeError({{"", DType::kF32, {1}, &x}}), p + "tensor name '' is reserved or empty");
  EXPECT_EQ(writeError({{"a", DType::kF32, {-1}, &x}}), p + "tensor 'a' has an invalid shape [-1]");
  EXPECT_EQ(writeError({{"a", DType::kF32, {2}, nullptr}}), p + "tensor 'a' has no data");
  EXPECT_TRUE(tmp.list().empty());
}

// Every truncation of a valid file is an error, and random damage to the header is an error or
// a file whose every tensor can be read within bounds: never a crash.
TEST(Safetensors, SurvivesTruncationAndGarbage) {
  TempDir tmp;
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::vector<uint16_t> h = {1, 2, 3};
  ASSERT_TRUE(
      writeSafetensors(tmp.path("v"),
                       {{"w", DType::kF32, {2, 3}, w.data()}, {"h", DType::kBF16, {3}, h.data()}},
                       {{"format", "pt"}})
          .ok());
  std::vector<uint8_t> valid = testing::readBytes(tmp.path("v"));
  parseOk(valid);
  for (size_t n = 0; n < valid.size(); ++n)
    parseError(std::vector<uint8_t>(valid.begin(), valid.begin() + n));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<uint8_t> bytes = valid;
    int edits = 1 + static_cast<int>(rng() % 3);
    size_t span = trial % 2 ? bytes.size() : 16;  // half the time, hit the length prefix
    for (int e = 0; e < edits; ++e) bytes[rng() % span] = static_cast<uint8_t>(rng());
    SafetensorsFile file;
    if (!SafetensorsFile::parse(bytes, "g", file).ok()) continue;
    for (const SafetensorsEntry &entry : file.tensors()) {
      std::vector<double> out;
      (void)file.readDoubles(entry.name, out);
    }
  }
}

}  // namespace
}  // namespace stepc::rt
