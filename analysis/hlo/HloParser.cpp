//===- analysis/hlo/HloParser.cpp - HLO text parser -----------------------===//
//
// Part of idxmap. Parses the HLO text XLA prints (see idxmap/Hlo.h) in one
// pass over the text, then resolves called computations by name and checks
// every instruction's shape against its operands and attributes.
//
//===----------------------------------------------------------------------===//
#include "HloLexer.h"
#include "HloVerifier.h"
#include "idxmap/Hlo.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>
#include <unordered_set>

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

//===----------------------------------------------------------------------===//
// Module structure
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<HloModule>> HloParserImpl::run() {
  M = std::make_unique<HloModule>();
  M->Source = std::string(Text);
  M->FileName = FileName;
  if (!parseHeader())
    return *Err;
  while (!L.atEnd()) {
    size_t Start = L.pos();
    std::string_view Word = L.lexName();
    if (Word == "ENTRY") {
      if (!parseComputation(/*IsEntry=*/true, L.pos()))
        return *Err;
      continue;
    }
    if (Word == "FileNames" || Word == "FunctionNames" ||
        Word == "FileLocations" || Word == "StackFrames") {
      char Next = L.peek();
      if (Next != '{' && Next != '(') {
        if (!skipDebugSection())
          return *Err;
        continue;
      }
    }
    L.setPos(Start);
    if (!parseComputation(/*IsEntry=*/false, Start))
      return *Err;
  }
  if (M->Comps.empty()) {
    error(Text.size(), "expected at least one computation");
    return *Err;
  }
  if (!M->Entry) {
    M->Entry = M->Comps.back().get();
    M->Entry->IsEntry = true;
  }
  if (!resolveAndVerify())
    return *Err;
  return std::move(M);
}

bool HloParserImpl::parseHeader() {
  // XLA also takes a module without its header: computations only.
  size_t Start = (L.skipSpace(), L.pos());
  std::string_view Kw = L.lexName();
  if (Kw != "HloModule") {
    L.setPos(Start);
    if (Kw.empty())
      return errorHere("expected 'HloModule' or a computation");
    M->Name = "module";
    return true;
  }
  std::string_view Name = L.lexName();
  if (Name.empty())
    return errorHere("expected a module name");
  M->Name = std::string(Name);
  // Module attributes (is_scheduled=true, entry_computation_layout={...},
  // ...) are accepted and ignored.
  while (L.consumeIf(',')) {
    std::string_view Key = L.lexWord();
    if (Key.empty())
      return errorHere("expected a module attribute name");
    if (!expect('='))
      return false;
    size_t ValueStart = L.pos();
    if (!L.skipValue())
      return error(ValueStart, "unterminated value of module attribute " +
                                   quote(Key));
  }
  return true;
}

bool HloParserImpl::skipDebugSection() {
  // Entries are `N "string"` or `N {key=value ...}`, one per line.
  while (true) {
    L.skipSpace();
    char C = L.peekRaw();
    if (C < '0' || C > '9')
      return true;
    if (!L.lexInt())
      return errorHere("invalid entry number");
    size_t ValueStart = L.pos();
    if (!L.skipValue())
      return error(ValueStart, "unterminated debug-info entry");
  }
}

bool HloParserImpl::parseComputation(bool IsEntry, size_t Offset) {
  size_t NameOffset = (L.skipSpace(), L.pos());
  std::string_view Name = L.lexName();
  if (Name.empty())
    return errorHere("expected a computation name");
  if (!CompByName.emplace(std::string(Name), nullptr).second)
    return error(NameOffset, "redefinition of computation " + quote(Name));
  if (IsEntry && M->Entry)
    return error(Offset, "a module has only one ENTRY computation");

  auto CPtr = std::make_unique<HloComputation>();
  HloComputation &C = *CPtr;
  C.Name = std::string(Name);
  C.Parent = M.get();
  C.IsEntry = IsEntry;
  C.Offset = NameOffset;
  CompByName[C.Name] = &C;
  M->Comps.push_back(std::move(CPtr));
  M->CompPtrs.push_back(&C);
  if (IsEntry)
    M->Entry = &C;

  // Optional signature `(p: f32[4]) -> f32[4]`: informational, skipped (the
  // parameter instructions carry the shapes).
  if (L.peek() == '(') {
    size_t SigStart = L.pos();
    if (!L.skipBalanced('(', ')'))
      return error(SigStart, "unterminated computation signature");
    if (!L.consumeIf("->"))
      return errorHere("expected '->' after the computation's parameters");
    Shape Result;
    if (!parseShape(Result))
      return false;
  }
  // Computation attributes (execution_thread="..."), ignored.
  while (L.consumeIf(',')) {
    std::string_view Key = L.lexWord();
    if (Key.empty() || !L.consumeIf('='))
      return errorHere("expected a computation attribute");
    if (!L.skipValue())
      return errorHere("unterminated attribute value");
  }
  if (!expect('{'))
    return false;

  Scope.clear();
  bool SawRoot = false;
  while (true) {
    if (L.atEnd())
      return errorHere("expected '}' at the end of computation " +
                       quote(C.Name));
    if (L.peek() == '}') {
      size_t Close = L.pos();
      L.consumeIf('}');
      // Attributes after the body (`}, execution_thread="x"`) are
      // accepted and dropped, like those before it.
      while (L.consumeIf(',')) {
        std::string_view Key = L.lexWord();
        if (Key.empty() || !L.consumeIf('='))
          return errorHere("expected a computation attribute");
        if (!L.skipValue())
          return errorHere("unterminated attribute value");
      }
      return finishComputation(C, Close);
    }
    if (!parseInstruction(C, SawRoot))
      return false;
  }
}

bool HloParserImpl::finishComputation(HloComputation &C, size_t CloseOffset) {
  if (C.Instrs.empty())
    return error(CloseOffset, "computation " + quote(C.Name) +
                                  " has no instructions");
  if (!C.Root)
    C.Root = C.Instrs.back().get();
  // Parameters must be numbered 0..n-1, each once; the table is sized from
  // the instructions, never from a number in the text.
  int64_t NumParams = 0;
  for (HloInstruction *I : C.InstrPtrs)
    NumParams += I->Op == HloOpcode::Parameter;
  std::vector<HloInstruction *> Params(size_t(NumParams), nullptr);
  for (HloInstruction *I : C.InstrPtrs) {
    if (I->Op != HloOpcode::Parameter)
      continue;
    int64_t N = I->ParameterNumber;
    if (N >= NumParams)
      return error(Info[I].OpcodeOffset,
                   "parameter number " + std::to_string(N) +
                       " is out of range: computation " + quote(C.Name) +
                       " has " + std::to_string(NumParams) + " parameter" +
                       (NumParams == 1 ? "" : "s"));
    if (Params[size_t(N)])
      return error(Info[I].OpcodeOffset,
                   "parameter number " + std::to_string(N) +
                       " is used twice in computation " + quote(C.Name));
    Params[size_t(N)] = I;
  }
  // n parameters, each numbered below n, none twice: all of 0..n-1.
  C.Params = std::move(Params);
  // Users, in instruction order, each once.
  for (HloInstruction *I : C.InstrPtrs)
    for (HloInstruction *Op : I->Operands)
      if (Op->Users.empty() || Op->Users.back() != I)
        Op->Users.push_back(I);
  return true;
}

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

bool HloParserImpl::parseInstruction(HloComputation &C, bool &SawRoot) {
  L.skipSpace();
  size_t Start = L.pos();
  std::string_view First = L.lexName();
  bool IsRoot = false;
  size_t NameOffset = Start;
  std::string_view Name = First;
  if (First == "ROOT" && L.peek() != '=') {
    IsRoot = true;
    NameOffset = (L.skipSpace(), L.pos());
    Name = L.lexName();
  }
  if (Name.empty())
    return errorHere("expected an instruction name");
  auto Clash = Scope.find(std::string(Name));
  if (Clash != Scope.end()) {
    // A name made up for an instruction written in place (`parameter.0`
    // for `add(x, f32[4] parameter(0))`) gives way to a later definition
    // of that name, which is no redefinition in the text.
    HloInstruction *Made = Clash->second;
    if (!Generated.count(Made))
      return error(NameOffset, "redefinition of instruction " + quote(Name));
    Scope.erase(Clash);
    Made->Name = freshName(Made->Name);
    Scope[Made->Name] = Made;
  }
  if (!expect('='))
    return false;
  HloInstruction *I = parseInstructionRhs(C, std::string(Name), NameOffset,
                                          /*AllowAttributes=*/true);
  if (!I)
    return false;
  if (IsRoot) {
    if (SawRoot)
      return error(Start, "computation " + quote(C.Name) +
                              " has more than one ROOT");
    SawRoot = true;
    C.Root = I;
  }
  return true;
}

bool HloParserImpl::atShape() {
  L.skipSpace();
  size_t Start = L.pos();
  if (L.peekRaw() == '(')
    return true;
  // A word right before `[` is an element type (opcodes take `(`); an
  // unknown one is reported by parseShape.
  std::string_view Word = L.lexName();
  L.setPos(Start);
  return !Word.empty() && L.text().substr(Start + Word.size(), 1) == "[";
}

std::string HloParserImpl::freshName(std::string_view Base) {
  for (int64_t K = 0;; ++K) {
    std::string N = std::string(Base) + "." + std::to_string(K);
    if (!Scope.count(N))
      return N;
  }
}

HloInstruction *HloParserImpl::addInstruction(
    HloComputation &C, std::unique_ptr<HloInstruction> IPtr) {
  HloInstruction *I = IPtr.get();
  I->Index = int64_t(C.Instrs.size());
  Scope[I->Name] = I;
  C.InstrPtrs.push_back(I);
  C.Instrs.push_back(std::move(IPtr));
  return I;
}

HloInstruction *HloParserImpl::parseInstructionRhs(HloComputation &C,
                                                   std::string Name,
                                                   size_t NameOffset,
                                                   bool AllowAttributes) {
  // Operands may be instructions written in place (`add(p, negate(q))`):
  // bounded, as every recursion on the text is.
  if (Nesting == HloLimits::MaxTupleDepth) {
    errorHere("instructions nested too deeply (limit " +
              std::to_string(HloLimits::MaxTupleDepth) + ")");
    return nullptr;
  }
  struct Nest {
    int &N;
    ~Nest() { --N; }
  } Guard{++Nesting};

  auto IPtr = std::make_unique<HloInstruction>();
  HloInstruction &I = *IPtr;
  I.Name = std::move(Name);
  I.Parent = &C;
  I.Offset = NameOffset;
  bool HasShape = atShape();
  if (HasShape && !parseShape(I.Sh))
    return nullptr;

  size_t OpOffset = (L.skipSpace(), L.pos());
  std::string_view OpName = L.lexName();
  if (OpName.empty()) {
    errorHere(HasShape ? "expected an opcode" : "expected a shape or an opcode");
    return nullptr;
  }
  std::optional<HloOpcode> Op = parseOpcode(OpName);
  if (!Op) {
    // XLA's async shorthand: `fusion-start` is async-start wrapping a
    // fusion (likewise -update, -done).
    static const std::pair<std::string_view, HloOpcode> Async[] = {
        {"-start", HloOpcode::AsyncStart},
        {"-update", HloOpcode::AsyncUpdate},
        {"-done", HloOpcode::AsyncDone}};
    for (const auto &[Suffix, AsyncOp] : Async)
      if (OpName.size() > Suffix.size() &&
          OpName.substr(OpName.size() - Suffix.size()) == Suffix &&
          parseOpcode(OpName.substr(0, OpName.size() - Suffix.size()))) {
        Op = AsyncOp;
        I.AsyncSpelling = std::string(OpName);
      }
  }
  if (!Op) {
    error(OpOffset, (HasShape ? "unknown opcode " : "unknown shape or opcode ") +
                        quote(OpName));
    return nullptr;
  }
  I.Op = *Op;
  Info[&I].OpcodeOffset = OpOffset;
  if (!HasShape &&
      (I.Op == HloOpcode::Parameter || I.Op == HloOpcode::Constant)) {
    error(OpOffset, std::string(opcodeName(I.Op)) + " needs its shape");
    return nullptr;
  }

  if (!expect('('))
    return nullptr;
  if (I.Op == HloOpcode::Parameter) {
    if (!parseInt(I.ParameterNumber, "parameter number"))
      return nullptr;
    if (I.ParameterNumber < 0) {
      error(OpOffset, "negative parameter number");
      return nullptr;
    }
    if (!expect(')'))
      return nullptr;
  } else if (I.Op == HloOpcode::Constant) {
    if (!parseConstantValue(I) || !expect(')'))
      return nullptr;
  } else if (!parseOperands(C, I)) {
    return nullptr;
  }

  while (AllowAttributes && L.consumeIf(',')) {
    size_t KeyOffset = (L.skipSpace(), L.pos());
    // Keys may contain '-' (`control-predecessors`).
    std::string_view Key = L.lexName();
    if (Key.empty()) {
      errorHere("expected an attribute name");
      return nullptr;
    }
    if (!expect('=') || !parseAttribute(I, Key, KeyOffset))
      return nullptr;
  }
  if (!HasShape && !inferShape(I))
    return nullptr;
  return addInstruction(C, std::move(IPtr));
}

bool HloParserImpl::inferShape(HloInstruction &I) {
  // XLA infers the result shape when the text leaves it out; idxmap does
  // for the ops whose result follows from their operands alone.
  HloOpcode Op = I.Op;
  auto Cannot = [&](const std::string &Why) {
    return error(Info[&I].OpcodeOffset, "cannot infer the shape of " +
                                            std::string(opcodeName(Op)) +
                                            " " + quote(I.Name) + ": " + Why);
  };
  auto ArrayOperand = [&](int64_t K) -> const Shape * {
    if (I.operandCount() <= K || !I.Operands[size_t(K)]->Sh.isArray() ||
        !isComputeType(I.Operands[size_t(K)]->Sh.Type))
      return nullptr;
    return &I.Operands[size_t(K)]->Sh;
  };
  if (Op == HloOpcode::Tuple) {
    std::vector<Shape> Elements;
    for (const HloInstruction *O : I.Operands)
      Elements.push_back(O->Sh);
    I.Sh = Shape::tuple(std::move(Elements));
    return true;
  }
  if (Op == HloOpcode::AfterAll) {
    I.Sh = Shape(PrimitiveType::Token, {});
    return true;
  }
  bool SameAsFirst = isUnaryElementwise(Op) || isBinaryElementwise(Op) ||
                     Op == HloOpcode::Copy ||
                     Op == HloOpcode::OptimizationBarrier;
  int64_t From = (Op == HloOpcode::Select || Op == HloOpcode::Clamp) ? 1 : 0;
  if (!SameAsFirst && Op != HloOpcode::Compare && From == 0)
    return Cannot("write the result shape");
  if (Op == HloOpcode::OptimizationBarrier && I.operandCount() == 1) {
    I.Sh = I.Operands[0]->Sh;
    return true;
  }
  const Shape *S = ArrayOperand(From);
  if (!S)
    return Cannot("operand " + std::to_string(From) +
                  " is not an array of a compute type");
  I.Sh = Shape(Op == HloOpcode::Compare || Op == HloOpcode::IsFinite
                   ? PrimitiveType::Pred
                   : S->Type,
               S->Dims);
  return true;
}

bool HloParserImpl::parseOperands(HloComputation &C, HloInstruction &I) {
  // At '(' already consumed.
  if (L.consumeIf(')'))
    return true;
  while (true) {
    HloInstruction *Operand = parseOperand(C);
    if (!Operand)
      return false;
    I.Operands.push_back(Operand);
    if (L.consumeIf(')'))
      return true;
    if (!expect(','))
      return false;
  }
}

HloInstruction *HloParserImpl::parseOperand(HloComputation &C) {
  // `[shape] name`, `name#1#0` (get-tuple-element shorthand), or an
  // instruction written in place: `[shape] opcode(operands)`.
  L.skipSpace();
  size_t Start = L.pos();
  std::optional<Shape> Written;
  if (atShape()) {
    Written.emplace();
    if (!parseShape(*Written))
      return nullptr;
  }
  size_t NameOffset = (L.skipSpace(), L.pos());
  std::string_view Name = L.lexName();
  if (Name.empty()) {
    errorHere("expected an operand name");
    return nullptr;
  }
  if (L.peekRaw() == '(' && !Scope.count(std::string(Name))) {
    L.setPos(Start);
    HloInstruction *Made = parseInstructionRhs(C, freshName(Name), NameOffset,
                                               /*AllowAttributes=*/false);
    Generated.insert(Made);
    return Made;
  }
  auto It = Scope.find(std::string(Name));
  if (It == Scope.end()) {
    error(NameOffset, "use of undefined instruction " + quote(Name));
    return nullptr;
  }
  HloInstruction *Operand = It->second;
  while (L.peekRaw() == '#') {
    L.setPos(L.pos() + 1);
    size_t IndexOffset = L.pos();
    int64_t Index;
    if (!parseInt(Index, "a tuple index"))
      return nullptr;
    const Shape &T = Operand->Sh;
    if (!T.isTuple() || Index < 0 || Index >= int64_t(T.TupleShapes.size())) {
      error(IndexOffset, "index " + std::to_string(Index) +
                             " is out of range for " + quote(Operand->Name) +
                             " of shape " + T.str());
      return nullptr;
    }
    auto G = std::make_unique<HloInstruction>();
    G->Name = freshName(Operand->Name);
    G->Op = HloOpcode::GetTupleElement;
    G->Sh = T.TupleShapes[size_t(Index)];
    G->Parent = &C;
    G->Offset = NameOffset;
    G->TupleIndex = Index;
    G->Operands.push_back(Operand);
    Info[G.get()].OpcodeOffset = NameOffset;
    Info[G.get()].Attrs.insert("index");
    Operand = addInstruction(C, std::move(G));
    Generated.insert(Operand);
  }
  if (Written && !Written->compatible(Operand->Sh)) {
    error(Start, "operand shape " + Written->str() + " does not match " +
                     quote(Name) + " of shape " + Operand->Sh.str());
    return nullptr;
  }
  return Operand;
}

bool HloParserImpl::parseInt(int64_t &Out, const char *What) {
  std::optional<int64_t> V = L.lexInt();
  if (!V)
    return errorHere(std::string("expected ") + What);
  Out = *V;
  return true;
}

bool HloParserImpl::parseIntList(std::vector<int64_t> &Out) {
  Out.clear();
  if (!expect('{'))
    return false;
  if (L.consumeIf('}'))
    return true;
  while (true) {
    int64_t V;
    if (!parseInt(V, "an integer"))
      return false;
    Out.push_back(V);
    if (L.consumeIf('}'))
      return true;
    if (!expect(','))
      return false;
  }
}

bool HloParserImpl::parseSliceList(HloInstruction &I) {
  // {[start:limit(:stride)?], ...}
  I.SliceStarts.clear();
  I.SliceLimits.clear();
  I.SliceStrides.clear();
  if (!expect('{'))
    return false;
  if (L.consumeIf('}'))
    return true;
  while (true) {
    int64_t Start, Limit, Stride = 1;
    if (!expect('[') || !parseInt(Start, "a slice start") || !expect(':') ||
        !parseInt(Limit, "a slice limit"))
      return false;
    if (L.consumeIf(':') && !parseInt(Stride, "a slice stride"))
      return false;
    if (!expect(']'))
      return false;
    I.SliceStarts.push_back(Start);
    I.SliceLimits.push_back(Limit);
    I.SliceStrides.push_back(Stride);
    if (L.consumeIf('}'))
      return true;
    if (!expect(','))
      return false;
  }
}

bool HloParserImpl::parsePadding(std::vector<PaddingDim> &Out) {
  // lo_hi(_interior)? joined by 'x'; empty for a scalar operand.
  Out.clear();
  L.skipSpace();
  char C = L.peekRaw();
  if (!(C == '-' || (C >= '0' && C <= '9')))
    return true;
  while (true) {
    PaddingDim D;
    if (!parseInt(D.Lo, "a low padding") || L.peekRaw() != '_')
      return errorHere("expected padding 'low_high' or "
                       "'low_high_interior'");
    L.setPos(L.pos() + 1);
    if (!parseInt(D.Hi, "a high padding"))
      return false;
    if (L.peekRaw() == '_') {
      L.setPos(L.pos() + 1);
      if (!parseInt(D.Interior, "an interior padding"))
        return false;
    }
    Out.push_back(D);
    if (L.peekRaw() != 'x')
      return true;
    L.setPos(L.pos() + 1);
  }
}

bool HloParserImpl::parseComputationRefs(HloInstruction &I,
                                         std::string_view Key) {
  CalledGroup G;
  G.Key = std::string(Key);
  auto One = [&]() {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view Name = L.lexName();
    if (Name.empty())
      return errorHere("expected a computation name");
    PendingCalls.push_back({&I, std::string(Name), Offset});
    ++G.Count;
    return true;
  };
  if (!L.consumeIf('{')) {
    if (!One())
      return false;
    I.CalledKeys.push_back(std::move(G));
    return true;
  }
  G.Braced = true;
  if (!L.consumeIf('}')) {
    while (true) {
      if (!One())
        return false;
      if (L.consumeIf('}'))
        break;
      if (!expect(','))
        return false;
    }
  }
  I.CalledKeys.push_back(std::move(G));
  return true;
}

bool HloParserImpl::keepValueText(HloInstruction &I, std::string_view Key) {
  size_t ValueStart = (L.skipSpace(), L.pos());
  if (!L.skipValue())
    return error(ValueStart, "unterminated value of attribute " + quote(Key));
  std::string_view Value = Text.substr(ValueStart, L.pos() - ValueStart);
  if (Value.empty())
    return error(ValueStart, "expected a value for attribute " + quote(Key));
  I.Attrs.push_back({std::string(Key), std::string(Value)});
  return true;
}

bool HloParserImpl::parseXList(std::vector<int64_t> &Out, const char *What) {
  // `3x3x1`: one integer per dimension, joined by 'x'.
  Out.clear();
  while (true) {
    int64_t V;
    if (!parseInt(V, What))
      return false;
    Out.push_back(V);
    if (L.peekRaw() != 'x')
      return true;
    L.setPos(L.pos() + 1);
  }
}

bool HloParserImpl::parseWindow(std::vector<WindowDim> &Out) {
  // {size=3x3 stride=1x1 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1
  //  rhs_reversal=0x1}: each field a list over the window's dimensions.
  Out.clear();
  if (!expect('{'))
    return false;
  std::vector<std::pair<std::string, std::vector<int64_t>>> Fields;
  std::vector<PaddingDim> Pads;
  bool HavePad = false;
  while (!L.consumeIf('}')) {
    size_t KeyOffset = (L.skipSpace(), L.pos());
    std::string_view Key = L.lexWord();
    if (Key.empty() || !L.consumeIf('='))
      return error(KeyOffset, "expected a window field (size=, stride=, "
                              "pad=, lhs_dilate=, rhs_dilate=, "
                              "rhs_reversal=)");
    for (const auto &F : Fields)
      if (F.first == Key)
        return error(KeyOffset, "duplicate window field " + quote(Key));
    if (Key == "pad") {
      if (HavePad)
        return error(KeyOffset, "duplicate window field 'pad'");
      HavePad = true;
      L.skipSpace();
      if (!parsePadding(Pads))
        return false;
      for (const PaddingDim &P : Pads)
        if (P.Interior != 0)
          return error(KeyOffset, "window padding is 'low_high' per "
                                  "dimension");
      continue;
    }
    if (Key != "size" && Key != "stride" && Key != "lhs_dilate" &&
        Key != "rhs_dilate" && Key != "rhs_reversal")
      return error(KeyOffset, "unknown window field " + quote(Key));
    std::vector<int64_t> V;
    L.skipSpace();
    if (!parseXList(V, "a window value"))
      return false;
    Fields.push_back({std::string(Key), std::move(V)});
  }
  size_t Rank = HavePad ? Pads.size() : 0;
  for (const auto &F : Fields)
    Rank = std::max(Rank, F.second.size());
  Out.assign(Rank, WindowDim());
  if (HavePad && Pads.size() != Rank)
    return errorHere("window fields have different numbers of dimensions");
  for (size_t D = 0; HavePad && D < Rank; ++D) {
    Out[D].PadLo = Pads[D].Lo;
    Out[D].PadHi = Pads[D].Hi;
  }
  for (const auto &[Key, V] : Fields) {
    if (V.size() != Rank)
      return errorHere("window fields have different numbers of dimensions");
    for (size_t D = 0; D < Rank; ++D) {
      int64_t X = V[D];
      if (Key == "rhs_reversal") {
        if (X != 0 && X != 1)
          return errorHere("rhs_reversal values are 0 or 1");
        Out[D].Reversal = X == 1;
        continue;
      }
      if (X < 1)
        return errorHere("window " + Key + " must be positive, got " +
                         std::to_string(X));
      if (Key == "size")
        Out[D].Size = X;
      else if (Key == "stride")
        Out[D].Stride = X;
      else if (Key == "lhs_dilate")
        Out[D].BaseDilation = X;
      else
        Out[D].WindowDilation = X;
    }
  }
  return true;
}

bool HloParserImpl::parseDimLabels(ConvolutionDimensions &Out) {
  // b01f_01io->b01f: one character per dimension of the input, the kernel
  // and the output: batch/feature (b, f), input/output feature (i, o),
  // spatial dimensions numbered 0, 1, ...
  size_t Start = (L.skipSpace(), L.pos());
  size_t End = Start;
  while (End < Text.size() &&
         (std::isalnum(static_cast<unsigned char>(Text[End])) ||
          Text[End] == '_' || Text[End] == '-' || Text[End] == '>'))
    ++End;
  std::string_view Labels = Text.substr(Start, End - Start);
  L.setPos(End);
  size_t Us = Labels.find('_'), Arrow = Labels.find("->");
  if (Us == std::string_view::npos || Arrow == std::string_view::npos ||
      Us > Arrow)
    return error(Start, "expected dim_labels like 'b01f_01io->b01f'");
  auto Part = [&](std::string_view P, char A, char B, int64_t &DimA,
                  int64_t &DimB, std::vector<int64_t> &Spatial) {
    DimA = DimB = -1;
    Spatial.assign(P.size(), -1);
    size_t NumSpatial = 0;
    for (size_t K = 0; K < P.size(); ++K) {
      char C = P[K];
      if (C == A && DimA < 0)
        DimA = int64_t(K);
      else if (C == B && DimB < 0)
        DimB = int64_t(K);
      else if (C >= '0' && C <= '9' && size_t(C - '0') < P.size() &&
               Spatial[size_t(C - '0')] < 0)
        Spatial[size_t(C - '0')] = int64_t(K), ++NumSpatial;
      else
        return false;
    }
    if (DimA < 0 || DimB < 0)
      return false;
    Spatial.resize(NumSpatial);
    for (int64_t S : Spatial)
      if (S < 0)
        return false;
    return true;
  };
  ConvolutionDimensions D;
  if (!Part(Labels.substr(0, Us), 'b', 'f', D.InputBatch, D.InputFeature,
            D.InputSpatial) ||
      !Part(Labels.substr(Us + 1, Arrow - Us - 1), 'i', 'o',
            D.KernelInputFeature, D.KernelOutputFeature, D.KernelSpatial) ||
      !Part(Labels.substr(Arrow + 2), 'b', 'f', D.OutputBatch,
            D.OutputFeature, D.OutputSpatial) ||
      D.InputSpatial.size() != D.KernelSpatial.size() ||
      D.InputSpatial.size() != D.OutputSpatial.size())
    return error(Start, "invalid dim_labels " + quote(Labels) +
                            ": each part names b and f (i and o for the "
                            "kernel) once and the same spatial dimensions "
                            "0, 1, ... once");
  Out = std::move(D);
  return true;
}

bool HloParserImpl::parseTypedAttribute(HloInstruction &I,
                                        std::string_view Key, bool &Handled) {
  Handled = true;
  HloOpcode Op = I.Op;
  auto Is = [&](std::initializer_list<HloOpcode> Ops) {
    return std::find(Ops.begin(), Ops.end(), Op) != Ops.end();
  };
  using O = HloOpcode;
  if (Key == "dimensions" &&
      Is({O::Broadcast, O::Transpose, O::Reduce, O::Reverse, O::Concatenate,
          O::Map, O::Sort, O::AllGather, O::AllGatherStart, O::AllToAll,
          O::ReduceScatter}))
    return parseIntList(I.Dimensions);
  if (Key == "slice" && Op == O::Slice)
    return parseSliceList(I);
  if (Key == "padding" && Op == O::Pad)
    return parsePadding(I.Padding);
  if (Key == "dynamic_slice_sizes" && Op == O::DynamicSlice)
    return parseIntList(I.DynamicSliceSizes);
  if (Key == "index" && Op == O::GetTupleElement)
    return parseInt(I.TupleIndex, "a tuple index");
  if (Key == "iota_dimension" && Op == O::Iota)
    return parseInt(I.IotaDimension, "an iota dimension");
  if (Key == "to_apply" || Key == "calls" || Key == "condition" ||
      Key == "body" || Key == "true_computation" ||
      Key == "false_computation" || Key == "branch_computations" ||
      Key == "called_computations" ||
      ((Key == "select" || Key == "scatter") && Op == O::SelectAndScatter))
    return parseComputationRefs(I, Key);
  if (Key == "window" && Is({O::Convolution, O::ReduceWindow,
                             O::SelectAndScatter}))
    return parseWindow(I.Window);
  if (Op == O::Convolution) {
    if (Key == "dim_labels")
      return parseDimLabels(I.ConvDims);
    if (Key == "feature_group_count")
      return parseInt(I.FeatureGroupCount, "a feature group count");
    if (Key == "batch_group_count")
      return parseInt(I.BatchGroupCount, "a batch group count");
  }
  if (Is({O::Dot, O::RaggedDot, O::ScaledDot})) {
    if (Key == "lhs_batch_dims")
      return parseIntList(I.DotDims.LhsBatch);
    if (Key == "lhs_contracting_dims")
      return parseIntList(I.DotDims.LhsContracting);
    if (Key == "rhs_batch_dims")
      return parseIntList(I.DotDims.RhsBatch);
    if (Key == "rhs_contracting_dims")
      return parseIntList(I.DotDims.RhsContracting);
  }
  if (Op == O::Gather) {
    GatherDimensions &G = I.GatherDims;
    if (Key == "offset_dims")
      return parseIntList(G.OffsetDims);
    if (Key == "collapsed_slice_dims")
      return parseIntList(G.CollapsedSliceDims);
    if (Key == "start_index_map")
      return parseIntList(G.StartIndexMap);
    if (Key == "operand_batching_dims")
      return parseIntList(G.OperandBatchingDims);
    if (Key == "start_indices_batching_dims")
      return parseIntList(G.StartIndicesBatchingDims);
    if (Key == "index_vector_dim")
      return parseInt(G.IndexVectorDim, "an index vector dimension");
    if (Key == "slice_sizes")
      return parseIntList(I.GatherSliceSizes);
  }
  if (Op == O::Scatter) {
    ScatterDimensions &S = I.ScatterDims;
    if (Key == "update_window_dims")
      return parseIntList(S.UpdateWindowDims);
    if (Key == "inserted_window_dims")
      return parseIntList(S.InsertedWindowDims);
    if (Key == "scatter_dims_to_operand_dims")
      return parseIntList(S.ScatterDimsToOperandDims);
    if (Key == "input_batching_dims")
      return parseIntList(S.InputBatchingDims);
    if (Key == "scatter_indices_batching_dims")
      return parseIntList(S.ScatterIndicesBatchingDims);
    if (Key == "index_vector_dim")
      return parseInt(S.IndexVectorDim, "an index vector dimension");
  }
  if (Key == "custom_call_target" && Op == O::CustomCall) {
    size_t Start = (L.skipSpace(), L.pos());
    if (L.peekRaw() != '"' || !L.skipValue())
      return error(Start, "expected a quoted custom_call_target");
    std::string_view Q = Text.substr(Start + 1, L.pos() - Start - 2);
    if (Q.find('\\') != std::string_view::npos)
      return error(Start, "escapes in custom_call_target are not supported");
    I.CustomCallTarget = std::string(Q);
    return true;
  }
  if (Key == "kind" && Op == O::Fusion) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view K = L.lexWord();
    if (K == "kLoop")
      I.Kind = FusionKind::Loop;
    else if (K == "kInput")
      I.Kind = FusionKind::Input;
    else if (K == "kOutput")
      I.Kind = FusionKind::Output;
    else if (K == "kCustom")
      I.Kind = FusionKind::Custom;
    else
      return error(Offset, "unknown fusion kind " + quote(K) +
                               " (expected kLoop, kInput, kOutput or kCustom)");
    return true;
  }
  if (Key == "direction" && Op == O::Compare) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view D = L.lexWord();
    static const std::pair<const char *, ComparisonDirection> Dirs[] = {
        {"EQ", ComparisonDirection::EQ}, {"NE", ComparisonDirection::NE},
        {"LT", ComparisonDirection::LT}, {"LE", ComparisonDirection::LE},
        {"GT", ComparisonDirection::GT}, {"GE", ComparisonDirection::GE}};
    for (const auto &[Name, Dir] : Dirs)
      if (D == Name) {
        I.Direction = Dir;
        return true;
      }
    return error(Offset, "unknown comparison direction " + quote(D));
  }
  if (Key == "type" && Op == O::Compare) {
    size_t Offset = (L.skipSpace(), L.pos());
    std::string_view T = L.lexWord();
    if (T == "FLOAT" || T == "PARTIALORDER")
      I.CmpType = ComparisonType::Float;
    else if (T == "TOTALORDER")
      I.CmpType = ComparisonType::TotalOrder;
    else if (T == "SIGNED")
      I.CmpType = ComparisonType::Signed;
    else if (T == "UNSIGNED")
      I.CmpType = ComparisonType::Unsigned;
    else
      return error(Offset, "unknown comparison type " + quote(T));
    return true;
  }
  Handled = false;
  return true;
}

bool HloParserImpl::parseAttribute(HloInstruction &I, std::string_view Key,
                                   size_t KeyOffset) {
  if (!Info[&I].Attrs.insert(std::string(Key)).second)
    return error(KeyOffset, "duplicate attribute " + quote(Key));
  bool Handled = false;
  if (!parseTypedAttribute(I, Key, Handled))
    return false;
  // metadata, backend_config, frontend_attributes, sharding, ...: kept as
  // written.
  return Handled || keepValueText(I, Key);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

bool HloParserImpl::parseShape(Shape &Out, int TupleDepth) {
  L.skipSpace();
  if (L.peekRaw() == '(') {
    // Shapes are recursive values (printing, comparing, copying them
    // recurses), hence the depth limit.
    if (TupleDepth == HloLimits::MaxTupleDepth)
      return errorHere("tuple shape nested too deeply (limit " +
                       std::to_string(HloLimits::MaxTupleDepth) + ")");
    L.consumeIf('(');
    std::vector<Shape> Elements;
    if (!L.consumeIf(')')) {
      while (true) {
        Shape E;
        if (!parseShape(E, TupleDepth + 1))
          return false;
        Elements.push_back(std::move(E));
        if (L.consumeIf(')'))
          break;
        if (!expect(','))
          return false;
      }
    }
    Out = Shape::tuple(std::move(Elements));
    return true;
  }
  size_t Start = L.pos();
  std::string_view TypeName = L.lexWord();
  if (TypeName.empty())
    return errorHere("expected a shape");
  std::optional<PrimitiveType> T = parsePrimitiveType(TypeName);
  if (!T)
    return error(Start, "unsupported element type " + quote(TypeName));
  Out = Shape(*T, {});
  if (!expect('['))
    return false;
  if (*T == PrimitiveType::Token) {
    if (!expect(']'))
      return false;
    if (L.peekRaw() == '{' && L.text().substr(L.pos(), 2) == "{}")
      L.setPos(L.pos() + 2); // token[]{}: an empty layout
    return true;
  }
  if (!L.consumeIf(']')) {
    while (true) {
      L.skipSpace();
      if (L.peekRaw() == '?')
        return errorHere("unbounded dynamic dimensions are not supported");
      L.consumeIf("<="); // a bounded dynamic dimension: use its bound
      size_t DimOffset = (L.skipSpace(), L.pos());
      int64_t D;
      if (!parseInt(D, "a dimension size"))
        return false;
      if (D < 0)
        return error(DimOffset, "negative dimension size");
      if (Out.rank() == HloLimits::MaxRank)
        return error(DimOffset, "shape has too many dimensions (limit " +
                                    std::to_string(HloLimits::MaxRank) + ")");
      Out.Dims.push_back(D);
      if (L.consumeIf(']'))
        break;
      if (!expect(','))
        return false;
    }
  }
  // Element counts must stay addressable.
  int64_t Count = 1;
  for (int64_t D : Out.Dims) {
    if (D != 0 && Count > std::numeric_limits<int64_t>::max() / 8 / D)
      return error(Start, "shape " + Out.str() + " has too many elements");
    Count *= D;
  }
  // A layout may follow after spaces (`f32[3,4] {1,0}`), but `-> f32[] {`
  // opens a computation's body: a layout's brace is followed by a
  // dimension number, `:` or `}` on the same line.
  size_t After = L.pos();
  while (After < Text.size() && (Text[After] == ' ' || Text[After] == '\t'))
    ++After;
  if (After < Text.size() && Text[After] == '{') {
    size_t Inner = After + 1;
    while (Inner < Text.size() && (Text[Inner] == ' ' || Text[Inner] == '\t'))
      ++Inner;
    char C = Inner < Text.size() ? Text[Inner] : 0;
    if ((C >= '0' && C <= '9') || C == ':' || (C == '}' && After == L.pos())) {
      L.setPos(After);
      return parseLayout(Out);
    }
  }
  return true;
}

bool HloParserImpl::parseLayout(Shape &S) {
  size_t Start = L.pos();
  L.consumeIf('{');
  std::vector<int64_t> MinorToMajor;
  L.skipSpace();
  if (L.peekRaw() != '}' && L.peekRaw() != ':') {
    while (true) {
      int64_t D;
      if (!parseInt(D, "a layout dimension"))
        return false;
      MinorToMajor.push_back(D);
      if (!L.consumeIf(','))
        break;
    }
  }
  size_t SuffixStart = 0;
  if (L.consumeIf(':')) {
    // Tiling, memory space, element size...: kept as text up to the
    // closing brace.
    SuffixStart = L.pos();
    int Depth = 1;
    while (L.pos() < Text.size()) {
      char C = Text[L.pos()];
      if (C == '{' || C == '(')
        ++Depth;
      if (C == '}' || C == ')')
        --Depth;
      if (Depth == 0)
        break;
      L.setPos(L.pos() + 1);
    }
  }
  if (SuffixStart) {
    std::string_view Suffix = Text.substr(SuffixStart, L.pos() - SuffixStart);
    while (!Suffix.empty() &&
           std::isspace(static_cast<unsigned char>(Suffix.back())))
      Suffix.remove_suffix(1);
    S.LayoutSuffix = std::string(Suffix);
  }
  if (!expect('}'))
    return false;
  if (!MinorToMajor.empty()) {
    std::vector<bool> Seen(S.Dims.size(), false);
    bool Valid = MinorToMajor.size() == S.Dims.size();
    for (int64_t D : MinorToMajor) {
      if (!Valid || D < 0 || D >= S.rank() || Seen[size_t(D)]) {
        Valid = false;
        break;
      }
      Seen[size_t(D)] = true;
    }
    if (!Valid)
      return error(Start, "layout is not a permutation of the dimensions of " +
                              S.str());
  }
  S.MinorToMajor = std::move(MinorToMajor);
  return true;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

bool HloParserImpl::parseConstantText(HloInstruction &I) {
  // The value of a constant the interpreter does not model (a tuple, c64,
  // f8...): kept as written, up to the `)` that closes `constant(`.
  size_t Start = (L.skipSpace(), L.pos());
  int Depth = 0;
  size_t P = Start;
  for (; P < Text.size(); ++P) {
    char C = Text[P];
    if (C == '"') {
      L.setPos(P);
      if (!L.skipValue())
        return error(P, "unterminated string in a constant");
      P = L.pos() - 1;
      continue;
    }
    if (C == '(' || C == '{' || C == '[')
      ++Depth;
    else if (C == ')' || C == '}' || C == ']') {
      if (Depth == 0)
        break;
      --Depth;
    }
  }
  if (P >= Text.size() || Text[P] != ')')
    return error(Start, "unterminated constant value");
  std::string_view V = Text.substr(Start, P - Start);
  while (!V.empty() && std::isspace(static_cast<unsigned char>(V.back())))
    V.remove_suffix(1);
  if (V.empty())
    return error(Start, "expected a constant value");
  I.ValueText = std::string(V);
  I.Elided = true;
  L.setPos(P);
  return true;
}

bool HloParserImpl::parseConstantValue(HloInstruction &I) {
  int64_t Bytes = I.Sh.byteSize();
  if (Bytes > HloLimits::MaxConstantBytes - ConstantBytes)
    return error(Info[&I].OpcodeOffset,
                 "constants too large: " + std::to_string(ConstantBytes) +
                     " + " + std::to_string(Bytes) + " bytes (limit " +
                     std::to_string(HloLimits::MaxConstantBytes) + ")");
  if (!I.Sh.isArray() || !isComputeType(I.Sh.Type)) {
    ConstantBytes += Bytes;
    return parseConstantText(I);
  }
  // parseShape keeps element counts below INT64_MAX / 8: no overflow here.
  Bytes = I.Sh.numElements() * byteWidth(I.Sh.Type);
  if (Bytes > HloLimits::MaxConstantBytes - ConstantBytes)
    return error(Info[&I].OpcodeOffset,
                 "constants too large: " + std::to_string(ConstantBytes) +
                     " + " + std::to_string(Bytes) + " bytes (limit " +
                     std::to_string(HloLimits::MaxConstantBytes) + ")");
  ConstantBytes += Bytes;
  I.Value = Literal(Shape(I.Sh.Type, I.Sh.Dims));
  L.skipSpace();
  // `{...}`: a large constant printed without its value.
  if (L.text().substr(L.pos(), 5) == "{...}") {
    L.setPos(L.pos() + 5);
    I.Elided = true;
    return true;
  }
  if (I.Sh.rank() == 0) {
    // Allow `{5}` as well as `5` for a scalar.
    bool Braced = L.consumeIf('{');
    if (!parseLiteralElement(I.Value, 0))
      return false;
    return !Braced || expect('}');
  }
  if (L.peekRaw() != '{') {
    // XLA's shorthand for an array of one value: `f32[3,4] constant(1)`.
    if (!parseLiteralElement(I.Value, 0))
      return false;
    uint64_t Bits = I.Value.getBits(0);
    for (int64_t K = 1, N = I.Value.elementCount(); K < N; ++K)
      I.Value.setBits(K, Bits);
    return true;
  }
  int64_t Next = 0;
  return parseLiteralNested(I.Sh, I.Value, 0, Next);
}

bool HloParserImpl::parseLiteralNested(const Shape &S, Literal &Lit,
                                       size_t Dim, int64_t &Next) {
  size_t Open = (L.skipSpace(), L.pos());
  if (!expect('{'))
    return false;
  int64_t Want = S.Dims[Dim];
  int64_t Count = 0;
  if (!L.consumeIf('}')) {
    while (true) {
      if (Count == Want)
        return errorHere("too many elements in dimension " +
                         std::to_string(Dim) + " of a " + S.str() +
                         " constant (expected " + std::to_string(Want) + ")");
      if (Dim + 1 == S.Dims.size()) {
        if (!parseLiteralElement(Lit, Next++))
          return false;
      } else if (!parseLiteralNested(S, Lit, Dim + 1, Next)) {
        return false;
      }
      ++Count;
      if (L.consumeIf('}'))
        break;
      if (!expect(','))
        return false;
    }
  }
  if (Count != Want)
    return error(Open, "expected " + std::to_string(Want) +
                           " elements in dimension " + std::to_string(Dim) +
                           " of a " + S.str() + " constant, got " +
                           std::to_string(Count));
  return true;
}

bool HloParserImpl::parseLiteralElement(Literal &Lit, int64_t Index) {
  size_t Start = (L.skipSpace(), L.pos());
  std::string Tok(L.lexLiteralToken());
  if (Tok.empty())
    return errorHere("expected a literal value");
  PrimitiveType T = Lit.elementType();
  auto Bad = [&]() {
    return error(Start, "invalid " + std::string(primitiveTypeName(T)) +
                            " literal " + quote(Tok));
  };
  if (T == PrimitiveType::Pred) {
    if (Tok == "true" || Tok == "1")
      Lit.setBits(Index, 1);
    else if (Tok == "false" || Tok == "0")
      Lit.setBits(Index, 0);
    else
      return Bad();
    return true;
  }
  if (isIntegralType(T)) {
    errno = 0;
    char *End = nullptr;
    bool Negative = Tok[0] == '-';
    if (isUnsignedIntType(T)) {
      if (Negative)
        return error(Start, "negative value " + quote(Tok) + " for " +
                                std::string(primitiveTypeName(T)));
      unsigned long long V = std::strtoull(Tok.c_str(), &End, 10);
      if (*End || errno == ERANGE)
        return Bad();
      int Bits = bitWidth(T);
      if (Bits < 64 && V >> Bits)
        return error(Start, "value " + Tok + " is out of range for " +
                                std::string(primitiveTypeName(T)));
      Lit.setBits(Index, V);
      return true;
    }
    long long V = std::strtoll(Tok.c_str(), &End, 10);
    if (*End || errno == ERANGE)
      return Bad();
    int Bits = bitWidth(T);
    if (Bits < 64 && (V < -(1ll << (Bits - 1)) || V >= (1ll << (Bits - 1))))
      return error(Start, "value " + Tok + " is out of range for " +
                              std::string(primitiveTypeName(T)));
    Lit.setInt(Index, V);
    return true;
  }
  // Floating point.
  double V;
  std::string Body = Tok;
  bool Negative = false;
  if (Body[0] == '-' || Body[0] == '+') {
    Negative = Body[0] == '-';
    Body = Body.substr(1);
  }
  if (Body == "inf") {
    V = std::numeric_limits<double>::infinity();
  } else if (Body.compare(0, 3, "nan") == 0) {
    V = std::numeric_limits<double>::quiet_NaN();
  } else {
    if (!(Body[0] >= '0' && Body[0] <= '9') && Body[0] != '.')
      return Bad();
    char *End = nullptr;
    V = std::strtod(Body.c_str(), &End);
    if (*End)
      return Bad();
  }
  Lit.setDouble(Index, Negative ? -V : V);
  return true;
}

//===----------------------------------------------------------------------===//
// Resolution and verification
//===----------------------------------------------------------------------===//

bool HloParserImpl::resolveAndVerify() {
  for (const PendingCall &P : PendingCalls) {
    std::string_view Name = P.Name;
    if (!Name.empty() && Name.front() == '%')
      Name.remove_prefix(1);
    auto It = CompByName.find(std::string(Name));
    HloComputation *C = It == CompByName.end() ? nullptr : It->second;
    if (!C)
      return error(P.Offset, "unknown computation " + quote(P.Name));
    P.Instr->Called.push_back(C);
  }
  if (!checkCallGraph())
    return false;
  for (HloComputation *C : M->CompPtrs) {
    for (HloInstruction *I : C->InstrPtrs) {
      const InstrInfo &II = Info[I];
      if (std::optional<std::string> Problem =
              hlo::verifyInstruction(*I, II.Attrs))
        return error(II.OpcodeOffset, *Problem);
    }
  }
  return true;
}

bool HloParserImpl::checkCallGraph() {
  // Depth-first search over the call graph with an explicit stack (its depth
  // follows the input). A back edge is a cycle. Height[C] counts the
  // computations on the longest call chain from C down, C included.
  enum State { Unvisited, Active, Done };
  std::unordered_map<const HloComputation *, State> St;
  std::unordered_map<const HloComputation *, int64_t> Height;
  struct Frame {
    const HloComputation *C;
    size_t Instr = 0;
    size_t Callee = 0;
  };
  auto TooDeep = [&](const HloInstruction *Caller) {
    return error(Info[Caller].OpcodeOffset,
                 "calls nested too deeply (limit " +
                     std::to_string(HloLimits::MaxCallDepth) + ")");
  };
  // Raises the height of the frame on top of \p Stack past \p Callee's.
  auto Raise = [&](std::vector<Frame> &Stack, const HloComputation *Callee) {
    const Frame &F = Stack.back();
    int64_t &H = Height[F.C];
    H = std::max(H, Height[Callee] + 1);
    return H <= HloLimits::MaxCallDepth ||
           TooDeep(F.C->instructions()[F.Instr]);
  };
  for (const HloComputation *Top : M->CompPtrs) {
    if (St.count(Top))
      continue;
    std::vector<Frame> Stack{{Top}};
    St[Top] = Active;
    Height[Top] = 1;
    while (!Stack.empty()) {
      Frame &F = Stack.back();
      const std::vector<HloInstruction *> &Instrs = F.C->instructions();
      if (F.Instr == Instrs.size()) {
        const HloComputation *Finished = F.C;
        St[Finished] = Done;
        Stack.pop_back();
        if (!Stack.empty() && !Raise(Stack, Finished))
          return false;
        continue;
      }
      const HloInstruction *I = Instrs[F.Instr];
      const std::vector<HloComputation *> &Callees = I->calledComputations();
      if (F.Callee == Callees.size()) {
        ++F.Instr;
        F.Callee = 0;
        continue;
      }
      const HloComputation *Callee = Callees[F.Callee++];
      auto It = St.find(Callee);
      State S = It == St.end() ? Unvisited : It->second;
      if (S == Active)
        return error(Info[I].OpcodeOffset,
                     "recursive call of computation " + quote(Callee->name()));
      if (S == Done) {
        if (!Raise(Stack, Callee))
          return false;
        continue;
      }
      St[Callee] = Active;
      Height[Callee] = 1;
      Stack.push_back({Callee});
    }
  }
  return true;
}

Expected<std::unique_ptr<HloModule>> parseHloModule(std::string_view Text,
                                                    const std::string &FileName) {
  HloParserImpl P(Text, FileName);
  return P.run();
}

} // namespace idxmap
