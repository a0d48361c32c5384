import EventGraph

struct VerifyCommand: ToolCommand {
  let spec = CommandSpec(
    name: "verify", abstract: "Check every commit's checksum and that replaying the log gives the stored state.",
    discussion:
      "Changes nothing. Exit status 1 when a problem is found; each problem names its log sequence or database key. A store directory or file that others may read or write is reported as a warning (a store is its owner's alone: 0700 for the directory, 0600 for its files), which does not make it fail.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    examples: ["eventtool verify book.store"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"))
    let total = Int((try store.read { try $0.logEnd() }).sequence)
    let bar = io.progress("verify", total: total)
    let report = try store.verify { bar.update($0) }
    bar.finish()
    for w in report.warnings { io.printError("warning: \(w)") }
    guard report.isOK else {
      for p in report.problems { io.printError(p) }
      throw ToolError.failed("\(report.problems.count) problem(s) found")
    }
    io.print("ok: \(report.commits) commits, \(report.events) events; checksums correct; replay equals the projections")
  }
}

struct RebuildCommand: ToolCommand {
  /// The projections of one's own this tool can rebuild (`--projection NAME`).
  var projections: [any Projection] = []

  var spec: CommandSpec {
    CommandSpec(
      name: "rebuild", abstract: "Rebuild every projection by replaying the log.",
      positionals: [PositionalSpec("STORE", help: "The store directory.")],
      options: [
        OptionSpec(
          "projection", valueName: "NAME",
          help: "Rebuild only this projection of one's own (known to this tool: "
            + projections.map(\.name).joined(separator: ", ") + ").")
      ],
      examples: ["eventtool rebuild book.store", "eventtool rebuild book.store --projection entity-counts"])
  }

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    if let name = a.value("projection") {
      return try RebuildProjection.run(name, projections: projections, store: try a.required("STORE"), io)
    }
    // Entries that fail their checksums are what a rebuild mends: only the pages are checked.
    let store = try openStore(try a.required("STORE"), writing: true, checkingEntries: false)
    let total = Int((try store.read { try $0.logEnd() }).sequence)
    let bar = io.progress("rebuild", total: total)
    let start = ContinuousClock.now
    let (commits, events) = try store.rebuild { bar.update($0) }
    bar.finish()
    io.print("rebuilt from \(commits) commits, \(events) events in \(start.duration(to: .now))")
  }
}

/// Prints the generated CLI reference or bash completion, from the same descriptions as `--help`.
struct ReferenceCommand: ToolCommand {
  let spec = CommandSpec(
    name: "reference", abstract: "Print the command reference (Markdown) or a bash completion script.",
    options: [OptionSpec("bash-completion", help: "Print the bash completion script instead.")],
    examples: ["eventtool reference > Docs/cli.md", "eventtool reference --bash-completion > eventtool.bash"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let cli = EventTool().interface
    io.writeOut(a.flag("bash-completion") ? cli.bashCompletionScript() : cli.markdownReference())
  }
}
