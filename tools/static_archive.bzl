"""static_archive: one static library holding the objects of a cc_library and all it depends on.

`stepc compile` links each executable it emits against one archive of the runtime (main()
included). Bazel's cc_library archives hold only their own sources, so this rule merges the
archives of the transitive closure (each object compiled once, for the fine-grained libraries
the tests link and for the executables alike) with an `ar -M` script; external libraries (the
system's, linked with -l) are left to the final link.
"""

def _static_archive_impl(ctx):
    archives = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            for library in linker_input.libraries:
                archive = library.pic_static_library or library.static_library
                if archive and archive.owner.workspace_name == "" and archive not in archives:
                    archives.append(archive)
    out = ctx.actions.declare_file("lib%s.a" % ctx.attr.name)
    script = ["CREATE " + out.path] + ["ADDLIB " + a.path for a in archives] + ["SAVE", "END"]
    ctx.actions.run_shell(
        inputs = archives,
        outputs = [out],
        command = "printf '%s\\n' \"$@\" | ar -M",
        arguments = script,
        mnemonic = "StaticArchive",
        progress_message = "Merging %d archives into %s" % (len(archives), out.short_path),
    )
    return [DefaultInfo(files = depset([out]))]

static_archive = rule(
    implementation = _static_archive_impl,
    attrs = {"deps": attr.label_list(providers = [CcInfo])},
)
