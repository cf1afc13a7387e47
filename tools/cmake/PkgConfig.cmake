# pkg-config files: idxmap.pc (analysis), idxmap-codegen.pc, idxmap-runtime.pc
# and idxmap-c.pc. Their prefix is found from the file's own place
# (${pcfiledir}), so an installed tree can be moved or installed with
# `cmake --install --prefix DIR`. For archives (the default), Libs lists what
# a static link needs; a shared build's libraries bring their own.

file(RELATIVE_PATH IDXMAP_PC_TO_PREFIX
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" IDXMAP_PC_TO_PREFIX "${IDXMAP_PC_TO_PREFIX}")
set(IDXMAP_PC_DIR ${PROJECT_BINARY_DIR}/pkgconfig)

# Writes NAME.pc with DESCRIPTION, LIBS (the Libs line after -L${libdir})
# and REQUIRES, and installs it.
function(idxmap_pkg_config name description libs requires)
  set(text "prefix=\${pcfiledir}/${IDXMAP_PC_TO_PREFIX}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: ${name}
Description: ${description}
Version: ${PROJECT_VERSION}
")
  if(requires)
    string(APPEND text "Requires: ${requires}\n")
  endif()
  string(APPEND text "Cflags: -I\${includedir}\nLibs: -L\${libdir} ${libs}\n")
  file(WRITE ${IDXMAP_PC_DIR}/${name}.pc "${text}")
  install(FILES ${IDXMAP_PC_DIR}/${name}.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

if(BUILD_SHARED_LIBS)
  set(IDXMAP_PC_ISL "")
else()
  set(IDXMAP_PC_ISL "isl")
endif()
idxmap_pkg_config(idxmap
  "Affine indexing maps and HLO fusion analysis (idxmap::analysis)"
  "-lidxmap_analysis" "${IDXMAP_PC_ISL}")

if(TARGET idxmap_codegen)
  set(IDXMAP_PC_LLVM "")
  if(NOT BUILD_SHARED_LIBS)
    foreach(lib ${IDXMAP_LLVM_LIBS})
      if(IS_ABSOLUTE "${lib}")
        string(APPEND IDXMAP_PC_LLVM " ${lib}")
      else()
        string(APPEND IDXMAP_PC_LLVM " -l${lib}")
      endif()
    endforeach()
  endif()
  idxmap_pkg_config(idxmap-codegen
    "HLO fusions to NVPTX PTX with LLVM 19 (idxmap::codegen)"
    "-lidxmap_codegen${IDXMAP_PC_LLVM}" "idxmap")
  idxmap_pkg_config(idxmap-runtime
    "Run PTX through the CUDA driver, loaded at run time (idxmap::runtime)"
    "-lidxmap_runtime -ldl" "idxmap")
  idxmap_pkg_config(idxmap-c
    "The C API of idxmap (one shared library, nothing else to link)"
    "-lidxmap-c" "")
endif()
