// The JSON reader and writer: values, escapes, UTF-8, errors with byte positions, and
// robustness against truncated and random input.
#include "runtime/base/Json.h"

#include <gtest/gtest.h>

#include <random>

namespace stepc::rt {
namespace {

JsonValue parseOk(const std::string &text) {
  JsonValue value;
  Status status = parseJson(text, value);
  EXPECT_TRUE(status.ok()) << text << ": " << status.message();
  return value;
}

std::string parseError(const std::string &text) {
  JsonValue value;
  Status status = parseJson(text, value);
  EXPECT_FALSE(status.ok()) << text;
  EXPECT_EQ(value.kind, JsonValue::Kind::kNull);  // no half-parsed value is left behind
  return status.message();
}

TEST(Json, ParsesEveryKindOfValue) {
  JsonValue v = parseOk(R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}, "e": {}} )");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[0].key, "a");  // members keep their order
  const JsonValue *a = v.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->items.size(), 5u);
  EXPECT_EQ(a->items[0].text, "1");
  EXPECT_EQ(a->items[1].text, "-2.5e3");
  EXPECT_EQ(a->items[2].kind, JsonValue::Kind::kBool);
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_FALSE(a->items[3].boolean);
  EXPECT_EQ(a->items[4].kind, JsonValue::Kind::kNull);
  EXPECT_EQ(v.find("b")->find("c")->text, "d");
  EXPECT_TRUE(v.find("e")->isObject());
  EXPECT_EQ(v.find("zz"), nullptr);
  EXPECT_EQ(a->find("a"), nullptr);  // find on a non-object
}

TEST(Json, DecodesEscapesAndUnicode) {
  JsonValue v = parseOk(R"("q\" b\\ s\/ \b\f\n\r\t \u00e9 \u20ac \ud83d\ude00 é")");
  EXPECT_EQ(v.text, "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc3\xa9");
}

TEST(Json, Uint64IsExactAndStrict) {
  uint64_t out = 7;
  EXPECT_TRUE(parseOk("18446744073709551615").toUint64(out));
  EXPECT_EQ(out, UINT64_MAX);
  EXPECT_TRUE(parseOk("9007199254740993").toUint64(out));  // 2^53 + 1: not a double
  EXPECT_EQ(out, 9007199254740993ull);
  out = 7;
  EXPECT_FALSE(parseOk("18446744073709551616").toUint64(out));  // overflow
  EXPECT_FALSE(parseOk("-1").toUint64(out));
  EXPECT_FALSE(parseOk("1.0").toUint64(out));
  EXPECT_FALSE(parseOk("1e3").toUint64(out));
  EXPECT_FALSE(parseOk("\"1\"").toUint64(out));
  EXPECT_EQ(out, 7u);
}

TEST(Json, ErrorsSayWhereAndWhat) {
  EXPECT_EQ(parseError(""), "JSON byte 0: expected a value, found the end of the text");
  EXPECT_EQ(parseError("{\"a\" 1}"), "JSON byte 5: expected ':' after a member name, found '1'");
  EXPECT_EQ(parseError("[1, 2"),
            "JSON byte 5: expected ',' or ']' in an array, found the end of the text");
  EXPECT_EQ(parseError("{\"a\":1,}"),
            "JSON byte 7: expected '\"' to start a member name, found '}'");
  EXPECT_EQ(parseError("[1] x"), "JSON byte 4: expected the end of the text, found 'x'");
  EXPECT_EQ(parseError("{\"k\":1,\"k\":2}"),
            "JSON byte 7: member name 'k' appears twice in one object");
  EXPECT_EQ(parseError("\"a\x01\""),
            "JSON byte 2: expected no raw control characters in a string, found byte 0x01");
  EXPECT_EQ(parseError("tru"), "JSON byte 0: expected 'true', found 't'");
}

TEST(Json, RejectsMalformedNumbersStringsAndUtf8) {
  for (const char *text : {"01",
                           "-",
                           "1.",
                           ".5",
                           "1e",
                           "+1",
                           "0x10",
                           "\"abc",
                           "\"\\x\"",
                           "\"\\u12\"",
                           "\"\\udc00\"",
                           "\"\\ud800\"",
                           "\"\\ud800\\u0041\"",
                           "\"\xc3\"",
                           "\"\xc0\x80\"",
                           "\"\xed\xa0\x80\"",
                           "\"\xf5\x80\x80\x80\"",
                           "\"\xff\"",
                           "nul",
                           "[",
                           "{",
                           "{\"a\"",
                           "{\"a\":",
                           "{1:2}",
                           "[1 2]"})
    parseError(text);
}

TEST(Json, BoundsNesting) {
  std::string deep(64, '['), deeper(1000000, '[');
  parseOk(deep + std::string(64, ']'));
  EXPECT_NE(parseError(deeper).find("nesting deeper than 64 levels"), std::string::npos);
}

TEST(Json, WriterRoundTrips) {
  JsonValue v = JsonValue::object();
  v.add("name \"quoted\"\n\x01", JsonValue::string("tab\there \\ é \x7f"));
  JsonValue list = JsonValue::array();
  list.items.push_back(JsonValue::number(0));
  list.items.push_back(JsonValue::number(UINT64_MAX));
  list.items.push_back(JsonValue::object());
  list.items.push_back(JsonValue());
  v.add("list", list);
  std::string text = writeJson(v);
  EXPECT_EQ(text,
            "{\"name \\\"quoted\\\"\\n\\u0001\":\"tab\\there \\\\ é \x7f\","
            "\"list\":[0,18446744073709551615,{},null]}");
  JsonValue back = parseOk(text);
  EXPECT_EQ(writeJson(back), text);
  EXPECT_EQ(back.members[0].key, v.members[0].key);
  EXPECT_EQ(back.members[0].value.text, v.members[0].value.text);
}

// Every prefix of a valid document and thousands of random mutations give a value or an
// error, never a crash (run under the sanitizers this would also catch out-of-bounds reads).
TEST(Json, SurvivesTruncationAndGarbage) {
  const std::string doc =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("s":"\u00e9\ud83d\ude00 x","n":[-1.5e-3,true,null]})";
  parseOk(doc);
  for (size_t n = 0; n < doc.size(); ++n) {
    JsonValue v;
    EXPECT_FALSE(parseJson(doc.substr(0, n), v).ok()) << n;
  }
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string text = doc;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) text[rng() % text.size()] = static_cast<char>(rng() % 256);
    JsonValue v;
    (void)parseJson(text, v);
  }
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text(rng() % 64, ' ');
    static const char kAlphabet[] = "{}[]\",:0123456789.-eEtrufalsn\\u \x80\xc3";
    for (char &c : text) c = kAlphabet[rng() % (sizeof kAlphabet - 1)];
    JsonValue v;
    (void)parseJson(text, v);
  }
}

}  // namespace
}  // namespace stepc::rt
