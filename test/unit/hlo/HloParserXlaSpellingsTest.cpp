//===- HloParserXlaSpellingsTest.cpp - XLA's HLO text spellings -----------===//
//
// Part of idxmap. HLO text as XLA and JAX write it, each case checked
// against what the printer writes back: layouts after a space, with tiling
// and memory spaces; array constants given as one scalar; modules without
// the `HloModule` line; attributes kept as text (metadata, backend_config
// in both forms, frontend_attributes, sharding, origin); `/*index=5*/`
// comments; `%` and bare names mixed; token shapes; constants of types the
// interpreter does not model kept as text; control flow, custom calls,
// async pairs, send/recv, infeed/outfeed and collectives; the canonical
// order of window, dim_labels and dot/gather/scatter dimension numbers.
// Every case also round-trips: print(parse(print(parse(x)))) ==
// print(parse(x)).
//
//===----------------------------------------------------------------------===//
#include "idxmap/Hlo.h"
#include "idxmap/HloInterpreter.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace idxmap;

namespace {

std::unique_ptr<HloModule> parse(const std::string &Text) {
  auto M = parseHloModule(Text, "x.hlo");
  EXPECT_TRUE(bool(M)) << (M ? "" : M.error().str());
  if (!M)
    return nullptr;
  return std::move(*M);
}

/// print(parse(Text)), checking that it parses back and prints the same.
std::string canonical(const std::string &Text) {
  auto M = parse(Text);
  if (!M)
    return "";
  std::string Printed = printHloModule(*M);
  auto Again = parseHloModule(Printed, "printed.hlo");
  EXPECT_TRUE(bool(Again)) << (Again ? "" : Again.error().str()) << "\n"
                           << Printed;
  if (Again) {
    EXPECT_EQ(printHloModule(**Again), Printed);
  }
  return Printed;
}

/// The printed line of instruction \p Name (without indentation and
/// `ROOT `), or "" if there is none.
std::string line(const std::string &Printed, const std::string &Name) {
  std::istringstream In(Printed);
  std::string L;
  while (std::getline(In, L)) {
    size_t P = L.find_first_not_of(' ');
    if (P == std::string::npos)
      continue;
    L = L.substr(P);
    if (L.rfind("ROOT ", 0) == 0)
      L = L.substr(5);
    if (L.rfind(Name + " = ", 0) == 0)
      return L;
  }
  return "";
}

/// A module with \p Body as its ENTRY computation's instructions.
std::string entry(const std::string &Body) {
  return "HloModule m\nENTRY e {\n" + Body + "\n}\n";
}

const char *AddComputation = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(HloParserXlaSpellingsTest, WhitespaceBeforeALayout) {
  std::string P = canonical(R"(HloModule m
ENTRY %e (p: f32[3,4]) -> f32[4,3] {
  %p = f32[3,4] {1,0} parameter(0)
  ROOT %t = f32[4,3]	{0,1} transpose(f32[3,4] {1,0} %p), dimensions={1,0}
}
)");
  EXPECT_EQ(line(P, "p"), "p = f32[3,4]{1,0} parameter(0)");
  EXPECT_EQ(line(P, "t"), "t = f32[4,3]{0,1} transpose(p), dimensions={1,0}");
}

TEST(HloParserXlaSpellingsTest, TiledAndMemorySpaceLayouts) {
  std::string P = canonical(entry(R"(
  a = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)
  b = f32[]{:T(128)} parameter(1)
  c = (f32[4]{0:T(4)}, s32[]) parameter(2)
  d = bf16[16,256]{1,0:T(8,128)(2,1)} parameter(3)
  ROOT n = f32[8,128]{1,0:S(1)} negate(a))"));
  EXPECT_EQ(line(P, "a"), "a = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)");
  EXPECT_EQ(line(P, "b"), "b = f32[]{:T(128)} parameter(1)");
  EXPECT_EQ(line(P, "c"), "c = (f32[4]{0:T(4)}, s32[]) parameter(2)");
  EXPECT_EQ(line(P, "d"), "d = bf16[16,256]{1,0:T(8,128)(2,1)} parameter(3)");
  EXPECT_EQ(line(P, "n"), "n = f32[8,128]{1,0:S(1)} negate(a)");
}

TEST(HloParserXlaSpellingsTest, ArrayConstantGivenAsOneScalar) {
  std::string Text = entry(R"(
  c = f32[3,4] constant(1)
  t = pred[2] constant(true)
  s = s32[2] constant({5, 5})
  v = f32[2] constant({1, 2})
  ROOT r = (f32[3,4], pred[2], s32[2], f32[2]) tuple(c, t, s, v))");
  std::string P = canonical(Text);
  // An array whose elements are all equal prints as the one value.
  EXPECT_EQ(line(P, "c"), "c = f32[3,4] constant(1)");
  EXPECT_EQ(line(P, "t"), "t = pred[2] constant(true)");
  EXPECT_EQ(line(P, "s"), "s = s32[2] constant(5)");
  EXPECT_EQ(line(P, "v"), "v = f32[2] constant({1, 2})");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const Literal &L = M->entry()->findInstruction("c")->literal();
  ASSERT_EQ(L.elementCount(), 12);
  for (int64_t K = 0; K < 12; ++K)
    EXPECT_EQ(L.getDouble(K), 1.0);
}

TEST(HloParserXlaSpellingsTest, ModuleWithoutHloModuleLine) {
  std::string P = canonical(R"(ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
)");
  EXPECT_EQ(P, "HloModule module\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
               "  ROOT n = f32[4] negate(p)\n}\n");
}

TEST(HloParserXlaSpellingsTest, AttributesKeptAndPrintedBack) {
  std::string Text = entry(R"(
  p = f32[4]{0} parameter(0), metadata={op_name="jit(f)/a}b" source_file="x{.py" source_line=3}, sharding={devices=[2]0,1}
  n = f32[4]{0} negate(p), backend_config="{\"a\":1, \"b\":\"}\"}", frontend_attributes={_xla_stream_annotation="1",k="v"}
  m = f32[4]{0} multiply(n, n), backend_config={"operation_queue_id":"0","wait_on_operation_queues":[]}, sharding={{replicated}}
  ROOT o = f32[4]{0} copy(m), origin={{"x"}}, metadata={})");
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "p"),
            "p = f32[4]{0} parameter(0), metadata={op_name=\"jit(f)/a}b\" "
            "source_file=\"x{.py\" source_line=3}, sharding={devices=[2]0,1}");
  EXPECT_EQ(line(P, "n"),
            "n = f32[4]{0} negate(p), backend_config=\"{\\\"a\\\":1, "
            "\\\"b\\\":\\\"}\\\"}\", frontend_attributes={_xla_stream_"
            "annotation=\"1\",k=\"v\"}");
  EXPECT_EQ(line(P, "m"),
            "m = f32[4]{0} multiply(n, n), backend_config={\"operation_queue_"
            "id\":\"0\",\"wait_on_operation_queues\":[]}, "
            "sharding={{replicated}}");
  EXPECT_EQ(line(P, "o"), "o = f32[4]{0} copy(m), origin={{\"x\"}}, "
                          "metadata={}");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const HloInstruction *Mul = M->entry()->findInstruction("m");
  ASSERT_TRUE(Mul->attribute("sharding").has_value());
  EXPECT_EQ(*Mul->attribute("sharding"), "{{replicated}}");
  EXPECT_FALSE(Mul->attribute("metadata").has_value());
}

TEST(HloParserXlaSpellingsTest, StringsEndAtTheFirstUnescapedQuote) {
  // A quote after an even run of backslashes closes the string (the last
  // backslash is escaped); after an odd run it is part of it.
  std::string Text = entry(R"(
  p = f32[4]{0} parameter(0), metadata={op_name="a\\" source_file="b\\\"c\\\\" source_line=2}
  ROOT n = f32[4]{0} negate(p), backend_config="\\\\\"x\"")");
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "p"),
            "p = f32[4]{0} parameter(0), metadata={op_name=\"a\\\\\" "
            "source_file=\"b\\\\\\\"c\\\\\\\\\" source_line=2}");
  EXPECT_EQ(line(P, "n"),
            "n = f32[4]{0} negate(p), backend_config=\"\\\\\\\\\\\"x\\\"\"");
  // No closing quote: an error at the attribute, not a crash.
  auto Bad = parseHloModule(entry(R"(
  ROOT p = f32[4]{0} parameter(0), metadata={op_name="a\")"),
                            "x.hlo");
  ASSERT_FALSE(Bad);
  EXPECT_NE(Bad.error().str().find("x.hlo:"), std::string::npos)
      << Bad.error().str();
}

TEST(HloParserXlaSpellingsTest, IntegerAttributes) {
  auto M = parse(entry(R"(
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=5, mantissa_bits=-3, a=1x, b=99999999999999999999, c=+4, d=9223372036854775807)"));
  ASSERT_TRUE(M);
  const HloInstruction *R = M->entry()->findInstruction("r");
  EXPECT_EQ(R->intAttribute("exponent_bits"), std::optional<int64_t>(5));
  EXPECT_EQ(R->intAttribute("mantissa_bits"), std::optional<int64_t>(-3));
  EXPECT_EQ(R->intAttribute("d"), std::optional<int64_t>(INT64_MAX));
  // Not a decimal integer, beyond int64, a sign other than `-`, missing.
  EXPECT_FALSE(R->intAttribute("a"));
  EXPECT_FALSE(R->intAttribute("b"));
  EXPECT_FALSE(R->intAttribute("c"));
  EXPECT_FALSE(R->intAttribute("metadata"));
}

TEST(HloParserXlaSpellingsTest, IndexCommentsAndMixedNames) {
  std::string P = canonical(entry(R"(
  %p0 = f32[2] parameter(0)
  p1 = f32[2] parameter(1)
  %a = f32[2] add(%p0, p1)
  b = f32[2] multiply(a, %a)
  ROOT %t = (f32[2], f32[2], f32[2], f32[2], f32[2], /*index=5*/f32[2]) tuple(p0, %p1, a, %b, b, /*index=5*/%a))"));
  EXPECT_EQ(line(P, "a"), "a = f32[2] add(p0, p1)");
  EXPECT_EQ(line(P, "b"), "b = f32[2] multiply(a, a)");
  EXPECT_EQ(line(P, "t"), "t = (f32[2], f32[2], f32[2], f32[2], f32[2], "
                          "f32[2]) tuple(p0, p1, a, b, b, a)");
}

TEST(HloParserXlaSpellingsTest, TokenShapes) {
  std::string Text = entry(R"(
  p = (f32[4], token[]) parameter(0)
  t = token[] get-tuple-element(p), index=1
  a = token[] after-all(t)
  v = f32[4] get-tuple-element(p), index=0
  ROOT r = (f32[4], token[]) tuple(v, a))");
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "p"), "p = (f32[4], token[]) parameter(0)");
  EXPECT_EQ(line(P, "a"), "a = token[] after-all(t)");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  EXPECT_TRUE(M->entry()->findInstruction("a")->shape().isToken());
  EXPECT_EQ(M->entry()->root()->shape().str(), "(f32[4], token[])");
}

TEST(HloParserXlaSpellingsTest, NonComputeConstantsKeptAsText) {
  std::string Text = entry(R"(
  c = c64[2] constant({(1, 2), (3, -4.5)})
  z = c128[] constant((1, -2.5))
  f = f8e4m3fn[3] constant({1, -0.5, 448})
  u = u4[3] constant({1, 2, 3})
  ROOT r = (c64[2], c128[], f8e4m3fn[3], u4[3]) tuple(c, z, f, u))");
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "c"), "c = c64[2] constant({(1, 2), (3, -4.5)})");
  EXPECT_EQ(line(P, "z"), "z = c128[] constant((1, -2.5))");
  EXPECT_EQ(line(P, "f"), "f = f8e4m3fn[3] constant({1, -0.5, 448})");
  EXPECT_EQ(line(P, "u"), "u = u4[3] constant({1, 2, 3})");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const HloInstruction *C = M->entry()->findInstruction("c");
  EXPECT_TRUE(C->literalElided());
  EXPECT_EQ(C->literalText(), "{(1, 2), (3, -4.5)}");
}

TEST(HloParserXlaSpellingsTest, ControlFlowPrintsBack) {
  std::string Text = std::string("HloModule m\n") + AddComputation + R"(
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  ROOT s = (s32[], f32[4]) parameter(0)
}
b0 {
  ROOT x = f32[4] parameter(0)
}
b1 {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY e {
  v = f32[4] parameter(0)
  i = s32[] parameter(1)
  pr = pred[] parameter(2)
  t = (s32[], f32[4]) tuple(i, v)
  w = (s32[], f32[4]) while(t), condition=%cond, body=body, backend_config={"known_trip_count":{"n":"3"}}
  c1 = f32[4] conditional(pr, v, v), true_computation=b0, false_computation=b1
  c2 = f32[4] conditional(i, v, v), branch_computations={b0, %b1}
  k = f32[4] call(v), to_apply=b1
  ROOT r = (f32[4], f32[4], f32[4]) tuple(c1, c2, k)
}
)";
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "w"), "w = (s32[], f32[4]) while(t), condition=cond, "
                          "body=body, backend_config={\"known_trip_count\":"
                          "{\"n\":\"3\"}}");
  EXPECT_EQ(line(P, "c1"), "c1 = f32[4] conditional(pr, v, v), "
                           "true_computation=b0, false_computation=b1");
  EXPECT_EQ(line(P, "c2"), "c2 = f32[4] conditional(i, v, v), "
                           "branch_computations={b0, b1}");
  EXPECT_EQ(line(P, "k"), "k = f32[4] call(v), to_apply=b1");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const HloInstruction *W = M->entry()->findInstruction("w");
  EXPECT_EQ(W->calledComputation("condition")->name(), "cond");
  EXPECT_EQ(W->calledComputation("body")->name(), "body");
  const HloInstruction *C2 = M->entry()->findInstruction("c2");
  ASSERT_EQ(C2->calledComputations("branch_computations").size(), 2u);
  EXPECT_EQ(C2->calledComputations("branch_computations")[1]->name(), "b1");
}

TEST(HloParserXlaSpellingsTest, SideEffectsAsyncAndCollectivesPrintBack) {
  std::string Text = std::string("HloModule m\n") + AddComputation + R"(
wrapped {
  q = f32[8] parameter(0)
  ROOT n = f32[8] negate(q)
}
ENTRY e {
  p = f32[8] parameter(0)
  t0 = token[] after-all()
  cc = f32[8] custom-call(p), custom_call_target="foo", api_version=API_VERSION_STATUS_RETURNING, backend_config="cfg"
  as = ((f32[8]), f32[8], s32[]) async-start(p), calls=wrapped
  ad = f32[8] async-done(as)
  fs = ((f32[8]), f32[8], s32[]) fusion-start(p), kind=kLoop, calls=wrapped
  fd = f32[8] fusion-done(fs)
  snd = (f32[8], u32[], token[]) send(p, t0), channel_id=5
  sd = token[] send-done(snd), channel_id=5
  rcv = (f32[8], u32[], token[]) recv(t0), channel_id=6
  rd = (f32[8], token[]) recv-done(rcv), channel_id=6
  inf = ((f32[8]), token[]) infeed(t0), infeed_config="x"
  outf = token[] outfeed(p, t0), outfeed_config="y"
  ar = f32[8] all-reduce(p), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=add
  ai = f32[8] all-reduce(p), replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%add
  ROOT r = f32[8] add(ad, ar)
}
)";
  std::string P = canonical(Text);
  EXPECT_EQ(line(P, "cc"), "cc = f32[8] custom-call(p), custom_call_target="
                           "\"foo\", api_version=API_VERSION_STATUS_RETURNING, "
                           "backend_config=\"cfg\"");
  EXPECT_EQ(line(P, "as"), "as = ((f32[8]), f32[8], s32[]) async-start(p), "
                           "calls=wrapped");
  EXPECT_EQ(line(P, "ad"), "ad = f32[8] async-done(as)");
  EXPECT_EQ(line(P, "fd"), "fd = f32[8] fusion-done(fs)");
  EXPECT_EQ(line(P, "snd"),
            "snd = (f32[8], u32[], token[]) send(p, t0), channel_id=5");
  EXPECT_EQ(line(P, "sd"), "sd = token[] send-done(snd), channel_id=5");
  EXPECT_EQ(line(P, "rcv"),
            "rcv = (f32[8], u32[], token[]) recv(t0), channel_id=6");
  EXPECT_EQ(line(P, "rd"),
            "rd = (f32[8], token[]) recv-done(rcv), channel_id=6");
  EXPECT_EQ(line(P, "inf"),
            "inf = ((f32[8]), token[]) infeed(t0), infeed_config=\"x\"");
  EXPECT_EQ(line(P, "outf"),
            "outf = token[] outfeed(p, t0), outfeed_config=\"y\"");
  // Called computations print first, then the kept attributes as written.
  EXPECT_EQ(line(P, "ar"), "ar = f32[8] all-reduce(p), to_apply=add, "
                           "channel_id=1, replica_groups={{0,1},{2,3}}");
  EXPECT_EQ(line(P, "ai"), "ai = f32[8] all-reduce(p), to_apply=add, "
                           "replica_groups=[2,2]<=[4], "
                           "use_global_device_ids=true");
  auto M = parse(Text);
  ASSERT_TRUE(M);
  const HloInstruction *FS = M->entry()->findInstruction("fs");
  EXPECT_EQ(FS->opcode(), HloOpcode::AsyncStart);
  EXPECT_EQ(FS->asyncSpelling(), "fusion-start");
  EXPECT_EQ(M->entry()->findInstruction("cc")->customCallTarget(), "foo");
}

TEST(HloParserXlaSpellingsTest, WindowDimLabelsAndDimensionNumbersCanonical) {
  std::string Text = R"(HloModule g
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,8,8,4] parameter(0)
  k = f32[3,3,2,16] parameter(1)
  conv = f32[1,8,8,16] convolution(x, k), dim_labels=b01f_01io->b01f, window={pad=1_1x1_1 size=3x3 stride=1x1 rhs_dilate=1x1}, feature_group_count=2, batch_group_count=1
  z = f32[] constant(0)
  rw = f32[1,4,4,4] reduce-window(x, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0 lhs_dilate=1x1x1x1}, to_apply=max
  op = f32[10,9] parameter(2)
  idx = s32[5,1] parameter(3)
  g = f32[5,9] gather(op, idx), slice_sizes={1,9}, index_vector_dim=1, start_index_map={0}, collapsed_slice_dims={0}, offset_dims={1}, indices_are_sorted=true
  upd = f32[5,9] parameter(4)
  sc = f32[10,9] scatter(op, idx, upd), to_apply=max, update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
  a = f32[2,3,4] parameter(5)
  b = f32[2,4,5] parameter(6)
  d = f32[2,3,5] dot(a, b), rhs_contracting_dims={1}, lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, operand_precision={highest,default}
  ROOT t = (f32[1,8,8,16], f32[1,4,4,4], f32[5,9], f32[10,9], f32[2,3,5]) tuple(conv, rw, g, sc, d)
}
)";
  std::string P = canonical(Text);
  // Window fields in XLA's order, default values left out.
  EXPECT_EQ(line(P, "conv"),
            "conv = f32[1,8,8,16] convolution(x, k), window={size=3x3 "
            "pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2");
  EXPECT_EQ(line(P, "rw"),
            "rw = f32[1,4,4,4] reduce-window(x, z), window={size=1x3x3x1 "
            "stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max");
  EXPECT_EQ(line(P, "g"),
            "g = f32[5,9] gather(op, idx), offset_dims={1}, "
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, "
            "slice_sizes={1,9}, indices_are_sorted=true");
  EXPECT_EQ(line(P, "sc"),
            "sc = f32[10,9] scatter(op, idx, upd), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=max");
  EXPECT_EQ(line(P, "d"),
            "d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, "
            "lhs_contracting_dims={2}, rhs_batch_dims={0}, "
            "rhs_contracting_dims={1}, operand_precision={highest,default}");
}

TEST(HloParserXlaSpellingsTest, InPlaceOperandNameGivesWayToALaterDefinition) {
  // `f32[4] parameter(0)` written in place is named `parameter.0`; the
  // module defines that name itself later, which is no redefinition.
  std::string P = canonical(entry(R"(
  x = f32[4] negate(f32[4] parameter(0))
  parameter.0 = f32[4] parameter(1)
  ROOT n = f32[4] add(x, parameter.0))"));
  EXPECT_EQ(line(P, "parameter.0.0"), "parameter.0.0 = f32[4] parameter(0)");
  EXPECT_EQ(line(P, "x"), "x = f32[4] negate(parameter.0.0)");
  EXPECT_EQ(line(P, "n"), "n = f32[4] add(x, parameter.0)");
  // A name defined twice in the text still is an error.
  auto M = parseHloModule(entry(R"(
  p = f32[4] parameter(0)
  p = f32[4] negate(p))"),
                          "x.hlo");
  ASSERT_FALSE(bool(M));
  EXPECT_NE(M.error().str().find("redefinition of instruction 'p'"),
            std::string::npos);
}

} // namespace
