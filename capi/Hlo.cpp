//===- capi/Hlo.cpp - C API: HLO modules and their indexing ---------------===//
//
// Part of idxmap.
//
//===----------------------------------------------------------------------===//
#include "Handles.h"

using namespace idxmap;
using capi::guarded;
using capi::setError;

idxmap_hlo_module *idxmap_hlo_module_parse(const char *Text,
                                           const char *FileName, char **Error) {
  if (!Text) {
    setError(Error, "idxmap_hlo_module_parse: NULL text");
    return nullptr;
  }
  return guarded<idxmap_hlo_module *>(
      Error, nullptr, [&]() -> idxmap_hlo_module * {
        auto M = parseHloModule(Text, FileName ? FileName : "<input>");
        if (!M) {
          setError(Error, M.error().str());
          return nullptr;
        }
        return new idxmap_hlo_module{std::shared_ptr<HloModule>(std::move(*M))};
      });
}

void idxmap_hlo_module_destroy(idxmap_hlo_module *Module) { delete Module; }

char *idxmap_hlo_module_print(const idxmap_hlo_module *Module) {
  if (!Module)
    return nullptr;
  return guarded<char *>(nullptr, nullptr, [&] {
    return capi::copyString(Module->Module->toString());
  });
}

idxmap_hlo_indexing *idxmap_hlo_output_to_input_indexing(
    idxmap_context *Ctx, const idxmap_hlo_module *Module,
    const char *Instruction, int64_t OutputId, char **Error) {
  if (!Ctx || !Module) {
    setError(Error, "idxmap_hlo_output_to_input_indexing: NULL argument");
    return nullptr;
  }
  return guarded<idxmap_hlo_indexing *>(
      Error, nullptr, [&]() -> idxmap_hlo_indexing * {
        const HloModule &M = *Module->Module;
        const HloInstruction *I =
            Instruction ? M.findInstruction(Instruction) : M.entry()->root();
        if (!I) {
          setError(Error, M.fileName() + ": no instruction named '" +
                              Instruction + "'");
          return nullptr;
        }
        int64_t N = numOutputs(*I);
        if (OutputId < 0 || OutputId >= N) {
          setError(Error, M.diagnose(I->sourceOffset(),
                                     "output " + std::to_string(OutputId) +
                                         " is out of range: '" + I->name() +
                                         "' has " + std::to_string(N) +
                                         (N == 1 ? " output" : " outputs"))
                              .str());
          return nullptr;
        }
        return new idxmap_hlo_indexing{
            Ctx->Ctx, Module->Module,
            computeOutputToInputIndexing(*Ctx->Ctx, *I, OutputId)};
      });
}

void idxmap_hlo_indexing_destroy(idxmap_hlo_indexing *Indexing) {
  delete Indexing;
}

size_t idxmap_hlo_indexing_num_operands(const idxmap_hlo_indexing *Indexing) {
  return Indexing ? Indexing->Indexing.Operands.size() : 0;
}

size_t idxmap_hlo_indexing_num_maps(const idxmap_hlo_indexing *Indexing,
                                    size_t Operand) {
  if (!Indexing || Operand >= Indexing->Indexing.Operands.size())
    return 0;
  return Indexing->Indexing.Operands[Operand].size();
}

idxmap_map *idxmap_hlo_indexing_map(const idxmap_hlo_indexing *Indexing,
                                    size_t Operand, size_t K) {
  if (!Indexing || Operand >= Indexing->Indexing.Operands.size() ||
      K >= Indexing->Indexing.Operands[Operand].size())
    return nullptr;
  return guarded<idxmap_map *>(nullptr, nullptr, [&] {
    return new idxmap_map{Indexing->Ctx,
                          Indexing->Indexing.Operands[Operand][K].Map};
  });
}

char *idxmap_hlo_indexing_print(const idxmap_hlo_indexing *Indexing) {
  if (!Indexing)
    return nullptr;
  return guarded<char *>(nullptr, nullptr, [&] {
    return capi::copyString(Indexing->Indexing.str());
  });
}
