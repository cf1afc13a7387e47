//===- TestSupport.cpp - Anchor of the test support library ---------------===//
//
// Part of idxmap. Keeps idxmap_test_support non-empty; shared helpers live in
// the other files of this folder.
//
//===----------------------------------------------------------------------===//
namespace idxmap::testing {
int testSupportAnchor() { return 0; }
} // namespace idxmap::testing
