//===- analysis/hlo/HloParser.cpp - HLO text parser -----------------------===//
//
// Part of idxmap. Parses the HLO text XLA prints (see idxmap/Hlo.h) in one
// pass over the text, then resolves called computations by name and checks
// every instruction's shape against its operands and attributes.
//
//===----------------------------------------------------------------------===//
#include "HloParserImpl.h"
#include "HloVerifier.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <set>

namespace idxmap {

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
  splitVariadicFusionRoots();
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
      return error(ValueStart,
                   "unterminated value of module attribute " + quote(Key));
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
    return error(CloseOffset,
                 "computation " + quote(C.Name) + " has no instructions");
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
      return error(Start,
                   "computation " + quote(C.Name) + " has more than one ROOT");
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

HloInstruction *
HloParserImpl::addInstruction(HloComputation &C,
                              std::unique_ptr<HloInstruction> IPtr) {
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
    errorHere(HasShape ? "expected an opcode"
                       : "expected a shape or an opcode");
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
    error(OpOffset,
          (HasShape ? "unknown opcode " : "unknown shape or opcode ") +
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
                                            std::string(opcodeName(Op)) + " " +
                                            quote(I.Name) + ": " + Why);
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

void HloParserImpl::splitVariadicFusionRoots() {
  std::set<HloComputation *> Done;
  for (HloComputation *Caller : M->CompPtrs)
    for (HloInstruction *F : Caller->InstrPtrs) {
      if (F->Op != HloOpcode::Fusion || F->Called.empty())
        continue;
      HloComputation &C = *F->Called.front();
      HloInstruction *Root = C.Root;
      if (!Done.insert(&C).second || !Root || Root->Op == HloOpcode::Tuple ||
          !Root->Sh.isTuple() || Root->Sh.TupleShapes.empty())
        continue;
      bool Arrays = true;
      for (const Shape &E : Root->Sh.TupleShapes)
        Arrays &= E.isArray();
      if (!Arrays)
        continue;
      // freshName and addInstruction name against this computation.
      Scope.clear();
      for (HloInstruction *I : C.InstrPtrs)
        Scope[I->Name] = I;
      auto Make = [&](HloOpcode Op, const std::string &Base, Shape Sh) {
        auto I = std::make_unique<HloInstruction>();
        I->Op = Op;
        I->Name = freshName(Base);
        I->Sh = std::move(Sh);
        I->Parent = &C;
        I->Offset = Root->Offset;
        return addInstruction(C, std::move(I));
      };
      std::vector<HloInstruction *> Elements;
      for (size_t K = 0; K < Root->Sh.TupleShapes.size(); ++K) {
        HloInstruction *G = Make(HloOpcode::GetTupleElement,
                                 Root->Name + ".out", Root->Sh.TupleShapes[K]);
        G->TupleIndex = int64_t(K);
        G->Operands.push_back(Root);
        Root->Users.push_back(G);
        Elements.push_back(G);
      }
      HloInstruction *T =
          Make(HloOpcode::Tuple, Root->Name + ".outs", Root->Sh);
      T->Operands = Elements;
      for (HloInstruction *G : Elements)
        G->Users.push_back(T);
      C.Root = T;
    }
}

Expected<std::unique_ptr<HloModule>>
parseHloModule(std::string_view Text, const std::string &FileName) {
  HloParserImpl P(Text, FileName);
  return P.run();
}

} // namespace idxmap
