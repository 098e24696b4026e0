# Offline shim: re-export Bazel's native C++ rules (Debian's bazel-rules-cc is too new for 4.2.3).
cc_library = native.cc_library
cc_binary = native.cc_binary
cc_test = native.cc_test
cc_import = native.cc_import
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
cc_proto_library = native.cc_proto_library
objc_library = native.objc_library
objc_import = native.objc_import
