# SPDX-License-Identifier: MIT
# Included by the top-level CMakeLists.txt in a native build: builds
# explorer/ (the library and the explorer's engine in WebAssembly, and the
# page) with Emscripten in <build>/explorer, whose site/ folder is the whole
# page, and registers the `browser` tests that drive it in headless Chromium.
# Each part is skipped with one status line when what it needs is missing.

if(DCH_SANITIZE)
    message(STATUS "explorer: not built under -DDCH_SANITIZE (it runs in the browser)")
    return()
endif()
find_program(DCH_EMCMAKE emcmake)
find_program(DCH_EMCC emcc)
if(NOT DCH_EMCMAKE OR NOT DCH_EMCC)
    message(STATUS "emcc not found: explorer/ (the in-browser explorer) is not built")
    return()
endif()

# Debian's emscripten finds its acorn module only through NODE_PATH.
set(dch_node_path "$ENV{NODE_PATH}")
if(EXISTS /usr/share/nodejs)
    if(dch_node_path)
        string(APPEND dch_node_path ":/usr/share/nodejs")
    else()
        set(dch_node_path /usr/share/nodejs)
    endif()
endif()

# Under make, the inner build is $(MAKE) so that it joins the outer make's
# jobserver (a plain `cmake --build` below make warns "jobserver
# unavailable" and runs with -j1); CMake 3.28's BUILD_JOB_SERVER_AWARE
# would do the same.
if(CMAKE_GENERATOR MATCHES "Make")
    set(dch_explorer_build ${CMAKE_COMMAND} -E env NODE_PATH=${dch_node_path} $(MAKE))
else()
    set(dch_explorer_build ${CMAKE_COMMAND} -E env NODE_PATH=${dch_node_path}
        ${CMAKE_COMMAND} --build <BINARY_DIR>)
endif()
include(ExternalProject)
ExternalProject_Add(dch_explorer
    SOURCE_DIR ${PROJECT_SOURCE_DIR}/explorer
    BINARY_DIR ${PROJECT_BINARY_DIR}/explorer
    CONFIGURE_COMMAND ${CMAKE_COMMAND} -E env NODE_PATH=${dch_node_path}
        ${DCH_EMCMAKE} ${CMAKE_COMMAND} -S <SOURCE_DIR> -B <BINARY_DIR>
        -DDCH_WERROR=${DCH_WERROR}
    BUILD_COMMAND ${dch_explorer_build}
    BUILD_ALWAYS ON
    INSTALL_COMMAND "")
set(DCH_EXPLORER_SITE ${PROJECT_BINARY_DIR}/explorer/site)

if(NOT dch_build_tests)
    return()
endif()
find_program(DCH_CHROMIUM NAMES chromium chromium-browser)
find_program(DCH_NODE node)
find_program(DCH_NPM npm)
if(NOT DCH_CHROMIUM OR NOT DCH_NODE OR NOT DCH_NPM OR NOT TARGET dch-analysis)
    message(STATUS "chromium, node, npm or dch-analysis missing: the explorer's browser test is not registered")
    return()
endif()

# puppeteer-core from the committed lock file, installed once per lock into
# the build tree (npm ci reaches the registry only when the lock changed).
set(dch_browser_dir ${PROJECT_BINARY_DIR}/tests/browser)
add_test(NAME browser_npm
    COMMAND ${CMAKE_COMMAND} -DNPM=${DCH_NPM}
        -DSRC=${PROJECT_SOURCE_DIR}/tests/browser -DDIR=${dch_browser_dir}
        -P ${PROJECT_SOURCE_DIR}/tests/browser/npm_ci.cmake)
set_tests_properties(browser_npm PROPERTIES
    FIXTURES_SETUP dch_browser_npm LABELS browser TIMEOUT 300)

# Serves the page on loopback, drives it in headless Chromium and checks its
# figures against dch-analysis; screenshots go to tests/browser/screenshots.
add_test(NAME explorer_browser
    COMMAND ${DCH_NODE} ${dch_browser_dir}/explorer.test.mjs
        --site ${DCH_EXPLORER_SITE}
        --analysis $<TARGET_FILE:dch-analysis>
        --chromium ${DCH_CHROMIUM}
        --out ${dch_browser_dir}/screenshots)
set_tests_properties(explorer_browser PROPERTIES
    FIXTURES_REQUIRED dch_browser_npm LABELS browser TIMEOUT 240)
