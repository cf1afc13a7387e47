# lit configuration for idxmap's golden text tests.
import os
import shutil
import lit.formats

config.name = "idxmap-golden"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".txt", ".map", ".hlo", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]
config.test_source_root = config.source_root
config.test_exec_root = config.build_root

config.substitutions.append(("%idxmap", os.path.join(config.idxmap_bin_dir, "idxmap")))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("%inputs", os.path.join(config.source_root, "Inputs")))
config.substitutions.append(("%examples", os.path.normpath(os.path.join(config.source_root, "..", "examples"))))
if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
config.environment["PATH"] = os.pathsep.join([config.idxmap_bin_dir, config.environment.get("PATH", "")])
# Graphviz: `partition --dot` output is also checked with `dot` where it is
# installed (RUN: %if dot %{ ... %}); skipped otherwise.
if shutil.which("dot"):
    config.available_features.add("dot")
