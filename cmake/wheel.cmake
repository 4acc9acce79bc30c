# Install rules of the Python package (ST_WHEEL=ON; `pip install .` sets it through pyproject.toml,
# scikit-build-core installing into the wheel's site-packages root).  One layout, repaired by
# auditwheel or not:
#
#   sasstune-autoload.pth          top of site-packages: SASSTUNE=1 imports the adapter at start-up
#   sasstune/libsasstune.so        the library the adapter loads first after $SASSTUNE_LIBRARY
#   sasstune/sasstune-worker       next to the library and to the commands, where both look for it
#   sasstune/sasstune              the command; pip's `sasstune` launcher on PATH execs it
#   sasstune/sasstune-cc           only when LLVM 19 was found (its launcher says so otherwise);
#                                  it loads the libsasstune.so next to it
#
# The executables stay inside the package rather than in the wheel's scripts folder: auditwheel
# moves ELF scripts into a folder of their own anyway (and puts a Python shim in their place),
# which would part the command from its worker; here the command, its worker and the library
# share one folder in every install, and the Python launchers (python/sasstune/_commands.py) are
# what lands on PATH.
install(TARGETS sasstune LIBRARY DESTINATION sasstune)
install(TARGETS sasstune_cli sasstune_worker RUNTIME DESTINATION sasstune)
if(TARGET sasstune_cc)
  install(TARGETS sasstune_cc RUNTIME DESTINATION sasstune)
  message(STATUS "sasstune-cc: in the Python package")
else()
  message(WARNING "sasstune-cc is not in the Python package: LLVM 19 (${ST_LLVM_CONFIG}, libLLVM) was not "
                  "found or ST_CC is OFF; apt-get install llvm-19-dev and reinstall to have it")
endif()
install(FILES ${PROJECT_SOURCE_DIR}/python/sasstune/autoload.pth DESTINATION . RENAME sasstune-autoload.pth)
