import EventGraph
import EventGraphMigration
import Foundation

struct UpcastCommand: ToolCommand {
  let policies: PolicyRegistry

  let spec = CommandSpec(
    name: "upcast", abstract: "Migrate the store to a new model version by replaying its log through a mapping.",
    discussion: """
      Replays the log, commit by commit, through the mapping (inferred when --mapping is not given) into a log \
      of the new version, keeping history, then switches the store to it in one atomic step. The old log stays: \
      'eventtool rollback' switches back. A killed upcast resumes where it stopped when run again.
      """,
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec(
        "model", valueName: "FILE",
        help:
          "The new model (*.model.json), with a greater version. Repeat to go through several versions in one pass.",
        isRepeatable: true, isRequired: true),
      OptionSpec(
        "mapping", valueName: "FILE",
        help: "A mapping (*.mapping.json), placed by its source version; a step without one is inferred. Repeatable.",
        isRepeatable: true),
      OptionSpec("dry-run", help: "Migrate a temporary copy, print the figures and a sample; change nothing."),
      OptionSpec(
        "discard-newer",
        help: "Upcast again even if the new version has commits of its own (after a rollback): they are lost."),
      OptionSpec(
        "batch", valueName: "N",
        help: "Source events per transaction and checkpoint (default 10000): smaller resumes closer to a crash."),
      OptionSpec(
        "follow",
        help:
          "Keep the new version caught up while the store keeps taking commits, until 'eventtool switch' (or --switch) switches to it."
      ),
      OptionSpec("switch", help: "With --follow: switch as soon as the new version is caught up."),
    ],
    examples: [
      "eventtool upcast book.store --model AddressBook.v2.model.json --mapping AddressBook.v1-v2.mapping.json",
      "eventtool upcast book.store --model AddressBook.v2.model.json --dry-run",
      "eventtool upcast book.store --model v2.model.json --model v3.model.json --mapping v1-v2.mapping.json",
      "eventtool upcast book.store --model AddressBook.v2.model.json --follow",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let batch = try a.int("batch")
    if let batch, batch < 1 { throw ToolError.usage("--batch needs a positive number, not \(batch)") }
    let modelFiles = a.values("model")
    let models = try modelFiles.map { try Model(contentsOf: $0) }
    let mappingFiles = a.values("mapping")
    let mappings = try mappingFiles.map { try MappingModel(contentsOf: $0) }
    if a.flag("switch") && !a.flag("follow") { throw ToolError.usage("--switch goes with --follow") }
    if a.flag("follow") {
      if a.flag("dry-run") { throw ToolError.usage("--follow and --dry-run do not go together") }
      return try follow(path, models, modelFiles, mappings, mappingFiles, batch, a, io)
    }
    let total = try openStore(path).read { Int(try $0.logEnd().sequence) }
    let bar = io.progress("upcast", total: total)
    let dryRun = a.flag("dry-run")
    let (report, sample) = try reportingAccess(path, writing: !dryRun) {
      try EventStore.upcast(
        at: path, through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles,
        modelFiles: modelFiles, dryRun: dryRun, batchEvents: batch, discardingNewerCommits: a.flag("discard-newer"),
        options: StoreOptions(keyFile: ToolKey.file), progress: { bar.update($0) })
    }
    bar.finish()
    io.print(
      (dryRun ? "dry run (nothing written): " : "") + "upcast v\(report.sourceVersion) -> v\(report.destinationVersion)"
        + (report.resumed ? " (resumed)" : ""))
    printFigures(report, io)
    if dryRun {
      io.print("sample of the result:")
      for line in sample { io.print("  " + line) }
    } else {
      io.print("the store is now at version \(report.destinationVersion); 'eventtool rollback \(path)' switches back")
    }
  }
}

extension UpcastCommand {
  private func printFigures(_ report: UpcastReport, _ io: ToolIO) {
    io.print("  read     \(report.commitsRead) commits, \(report.eventsRead) events")
    io.print("  wrote    \(report.commitsWritten) commits, \(report.eventsWritten) events")
    for (e, n) in report.objectsPerEntity { io.print("  objects  \(e): \(n)") }
    io.print("  time     \(String(format: "%.3f", report.seconds)) s")
  }

  /// `--follow`: runs until the switch; a line on standard error each time it is caught up.
  private func follow(
    _ path: String, _ models: [Model], _ modelFiles: [String], _ mappings: [MappingModel], _ mappingFiles: [String],
    _ batch: Int?, _ a: ParsedArguments, _ io: ToolIO
  ) throws {
    _ = try openStore(path)  // its pages checked, and closed again before the upcast opens it
    let control = FollowControl(
      switchWhenCaughtUp: a.flag("switch"),
      progress: { done, end in
        guard done == end else { return }
        io.printError("caught up at sequence \(done)")
      })
    let report = try reportingAccess(path, writing: true) {
      try EventStore.followingUpcast(
        at: path, through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles,
        modelFiles: modelFiles, batchEvents: batch, discardingNewerCommits: a.flag("discard-newer"),
        options: StoreOptions(keyFile: ToolKey.file), control: control)
    }
    io.print(
      "following upcast v\(report.sourceVersion) -> v\(report.destinationVersion)"
        + (report.resumed ? " (resumed)" : ""))
    printFigures(report, io)
    io.print("the store is now at version \(report.destinationVersion); 'eventtool rollback \(path)' switches back")
  }
}

struct SwitchCommand: ToolCommand {
  let spec = CommandSpec(
    name: "switch", abstract: "Switch the store to the version a following upcast builds.",
    discussion: """
      Asks the running 'eventtool upcast --follow' that builds the version to catch up with the last commits and \
      switch, in one write transaction, and waits until it has. Commits of the old version that come after the \
      switch are refused (versionChanged). Refused, with the store unchanged, when no following upcast builds \
      that version.
      """,
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [OptionSpec("to", valueName: "VERSION", help: "The version to switch to.", isRequired: true)],
    examples: ["eventtool switch book.store --to 2"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    guard let to = try a.int("to"), to >= 1 else { throw ToolError.usage("--to needs a model version (1 or more)") }
    _ = try openStore(path)  // its pages checked, and closed again before the switch opens it
    try reportingAccess(path, writing: true) { try EventStore.requestSwitch(at: path, to: to) }
    io.print("\(path) is now at version \(to)")
    if let s = try openStore(path).versionSwitch(to: to) {
      io.print(
        "  version \(s.from)'s log ended at sequence \(s.sourceEnd); version \(s.to)'s corresponds up to sequence \(s.position)"
      )
    }
  }
}

struct RollbackCommand: ToolCommand {
  let spec = CommandSpec(
    name: "rollback", abstract: "Switch the store back to the version it was upcast from (or forward again).",
    discussion:
      "Logs are never deleted by an upcast, so switching is one atomic step. --to goes forward again after a rollback, as long as the older log has not moved on.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [OptionSpec("to", valueName: "VERSION", help: "The version to make active.")],
    examples: ["eventtool rollback book.store", "eventtool rollback book.store --to 2"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let to = try a.int("to")
    if let to, to < 1 { throw ToolError.usage("--to needs a model version (1 or more), not \(to)") }
    _ = try openStore(path)  // its pages checked, and closed again before the rollback opens it
    let now = try reportingAccess(path, writing: true) { try EventStore.rollback(at: path, to: to) }
    io.print("\(path) is now at version \(now)")
  }
}
