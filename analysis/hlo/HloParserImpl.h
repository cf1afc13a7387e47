//===- analysis/hlo/HloParserImpl.h - The HLO parser's state -*- C++ -*-===//
//
// Part of idxmap. The parser class shared by HloParser.cpp (module,
// computation and instruction structure, name resolution),
// HloParseAttributes.cpp (attribute values) and HloParseValues.cpp (shapes,
// layouts and constants). Internal to the analysis library.
//
//===----------------------------------------------------------------------===//
#ifndef IDXMAP_ANALYSIS_HLO_HLOPARSERIMPL_H
#define IDXMAP_ANALYSIS_HLO_HLOPARSERIMPL_H

#include "HloLexer.h"
#include "idxmap/Hlo.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace idxmap {

using hlo::HloLexer;

/// The parser; a friend of the module classes so it can fill them in.
class HloParserImpl {
public:
  HloParserImpl(std::string_view Text, const std::string &FileName)
      : L(Text), Text(Text), FileName(FileName) {}

  Expected<std::unique_ptr<HloModule>> run();

private:
  /// Records the first error (later ones are consequences) and returns false.
  bool error(size_t Offset, std::string Message) {
    if (!Err)
      Err = makeDiagnostic(Text, Offset, std::move(Message), FileName);
    return false;
  }
  bool errorHere(std::string Message) {
    L.skipSpace();
    return error(L.pos(), std::move(Message));
  }
  bool expect(char C) {
    if (L.consumeIf(C))
      return true;
    return errorHere(std::string("expected '") + C + "'");
  }
  static std::string quote(std::string_view S) {
    return "'" + std::string(S) + "'";
  }

  bool parseHeader();
  bool skipDebugSection();
  bool parseComputation(bool IsEntry, size_t Offset);
  bool parseInstruction(HloComputation &C, bool &SawRoot);
  bool parseShape(Shape &Out, int TupleDepth = 0);
  bool parseLayout(Shape &S);
  bool parseOperands(HloComputation &C, HloInstruction &I);
  HloInstruction *parseOperand(HloComputation &C);
  HloInstruction *parseInstructionRhs(HloComputation &C, std::string Name,
                                      size_t NameOffset, bool AllowAttributes);
  HloInstruction *addInstruction(HloComputation &C,
                                 std::unique_ptr<HloInstruction> I);
  bool inferShape(HloInstruction &I);
  bool atShape();
  std::string freshName(std::string_view Base);
  bool parseAttribute(HloInstruction &I, std::string_view Key,
                      size_t KeyOffset);
  bool parseIntList(std::vector<int64_t> &Out);
  bool parseInt(int64_t &Out, const char *What);
  bool parseSliceList(HloInstruction &I);
  bool parsePadding(std::vector<PaddingDim> &Out);
  bool parseComputationRefs(HloInstruction &I, std::string_view Key);
  bool parseTypedAttribute(HloInstruction &I, std::string_view Key,
                           bool &Handled);
  bool parseWindow(std::vector<WindowDim> &Out);
  bool parseDimLabels(ConvolutionDimensions &Out);
  bool parseXList(std::vector<int64_t> &Out, const char *What);
  bool keepValueText(HloInstruction &I, std::string_view Key);
  bool parseConstantText(HloInstruction &I);
  bool parseConstantValue(HloInstruction &I);
  bool parseLiteralNested(const Shape &S, Literal &Lit, size_t Dim,
                          int64_t &Next);
  bool parseLiteralElement(Literal &Lit, int64_t Index);
  bool finishComputation(HloComputation &C, size_t CloseOffset);
  bool resolveAndVerify();
  bool checkCallGraph();
  /// Gives each fusion computation whose root is a variadic op (a tuple of
  /// arrays that is not a `tuple`) a `tuple` root of its elements.
  void splitVariadicFusionRoots();

  HloLexer L;
  std::string_view Text;
  std::string FileName;
  std::unique_ptr<HloModule> M;
  std::optional<Diagnostic> Err;

  /// Instructions by name, for the computation being parsed.
  std::unordered_map<std::string, HloInstruction *> Scope;
  /// Called computations by name, resolved after the whole module is read.
  struct PendingCall {
    HloInstruction *Instr;
    std::string Name;
    size_t Offset;
  };
  std::vector<PendingCall> PendingCalls;
  /// Computations by name (without `%`).
  std::unordered_map<std::string, HloComputation *> CompByName;
  /// Where each instruction's opcode is, and which attributes it had.
  struct InstrInfo {
    size_t OpcodeOffset = 0;
    std::unordered_set<std::string> Attrs;
  };
  std::unordered_map<const HloInstruction *, InstrInfo> Info;
  /// Instructions named by freshName (written in place as operands, or
  /// `name#i`): a later definition may take their name.
  std::unordered_set<const HloInstruction *> Generated;
  /// Bytes of the constants' values read so far (HloLimits).
  int64_t ConstantBytes = 0;
  /// Instructions being read, nested as operands (`add(p, negate(q))`).
  int Nesting = 0;
};

} // namespace idxmap

#endif // IDXMAP_ANALYSIS_HLO_HLOPARSERIMPL_H
