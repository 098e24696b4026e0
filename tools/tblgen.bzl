"""Runs Debian's mlir-tblgen (LLVM version pinned in //third_party:versions.bzl) as a genrule."""

load("//third_party:versions.bzl", "LLVM_ROOT")

def mlir_tblgen(name, td_file, td_srcs, outs):
    """outs: dict of generator flag (e.g. "-gen-op-decls") -> output file name."""
    for flag, out in outs.items():
        native.genrule(
            name = name + "_" + out.replace(".", "_"),
            srcs = [td_file] + [s for s in td_srcs if s != td_file] + ["@llvm//:mlir_td_files"],
            outs = [out],
            cmd = ("%s/bin/mlir-tblgen %s -I %s/include -I $$(dirname $(location %s)) " +
                   "$(location %s) -o $@") % (LLVM_ROOT, flag, LLVM_ROOT, td_file, td_file),
        )
    native.filegroup(name = name, srcs = outs.values())

def pass_library(name, group, srcs, hdrs = [], deps = []):
    """A package's passes: its Passes.td through -gen-pass-decls (registerStep<group>Passes()),
    and the cc_library of its sources with Passes.h and the generated Passes.h.inc, included as
    "<package>/Passes.h.inc"."""
    mlir_tblgen(
        name = "passes_inc",
        td_file = "Passes.td",
        td_srcs = [],
        outs = {"-gen-pass-decls -name " + group: "Passes.h.inc"},
    )
    native.cc_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs + ["Passes.h", ":Passes.h.inc"],
        include_prefix = native.package_name(),
        deps = deps,
    )
