# CUPTI headers for `sasstune profile` (runtime/cupti.c; docs/profile.md).  Only the headers
# are needed at build time: the worker dlopens libcupti at run time.  Looked for in
# ST_CUPTI_INCLUDE, $CUDA_HOME and /usr/local/cuda (extras/CUPTI/include, include), the pip
# wheel nvidia-cuda-cupti (cu13: nvidia/cu13/include; cu12: nvidia/cuda_cupti/include) and
# Triton's bundled headers; cupti_pcsampling.h includes cuda.h, which is looked for likewise.
# ST_CUPTI=OFF (or no headers) builds a profile command that says it was built without CUPTI.
option(ST_CUPTI "Build PC sampling (sasstune profile) when the CUPTI headers are found" ON)
set(ST_CUPTI_INCLUDE "" CACHE PATH "folder holding cupti_pcsampling.h (else searched)")

set(ST_CUPTI_FOUND OFF)
if(ST_CUPTI)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_st_py_dirs "")
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
      "import site,sys; print(';'.join(site.getsitepackages() + [site.getusersitepackages()]))"
      OUTPUT_VARIABLE _st_site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    foreach(_d ${_st_site})
      list(APPEND _st_py_dirs ${_d}/nvidia/cu13/include ${_d}/nvidia/cuda_cupti/include
                              ${_d}/nvidia/cuda_runtime/include ${_d}/triton/backends/nvidia/include)
    endforeach()
  endif()
  set(_st_hints ${ST_CUPTI_INCLUDE} $ENV{CUDA_HOME}/extras/CUPTI/include $ENV{CUDA_HOME}/include
                /usr/local/cuda/extras/CUPTI/include /usr/local/cuda/include ${_st_py_dirs})
  find_path(ST_CUPTI_INCLUDE_DIR cupti_pcsampling.h HINTS ${_st_hints})
  find_path(ST_CUDA_H_DIR cuda.h HINTS ${_st_hints})
  if(ST_CUPTI_INCLUDE_DIR AND ST_CUDA_H_DIR)
    set(ST_CUPTI_FOUND ON)
    message(STATUS "CUPTI headers: ${ST_CUPTI_INCLUDE_DIR} (cuda.h: ${ST_CUDA_H_DIR})")
    set_source_files_properties(${PROJECT_SOURCE_DIR}/runtime/cupti.c PROPERTIES
      COMPILE_DEFINITIONS ST_HAVE_CUPTI=1
      COMPILE_OPTIONS "-isystem;${ST_CUPTI_INCLUDE_DIR};-isystem;${ST_CUDA_H_DIR}")
  else()
    message(STATUS "CUPTI headers not found: sasstune profile will say it was built without CUPTI")
  endif()
endif()
