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
    ],
    examples: [
      "eventtool upcast book.store --model AddressBook.v2.model.json --mapping AddressBook.v1-v2.mapping.json",
      "eventtool upcast book.store --model AddressBook.v2.model.json --dry-run",
      "eventtool upcast book.store --model v2.model.json --model v3.model.json --mapping v1-v2.mapping.json",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let batch = try a.int("batch")
    if let batch, batch < 1 { throw ToolError.usage("--batch needs a positive number, not \(batch)") }
    let modelFiles = a.values("model")
    let models = try modelFiles.map { try Model(contentsOf: $0) }
    let mappingFiles = a.values("mapping")
    let mappings = try mappingFiles.map { try MappingModel(contentsOf: $0) }
    let total = try openStore(path).read { Int(try $0.logEnd().sequence) }
    let bar = io.progress("upcast", total: total)
    let dryRun = a.flag("dry-run")
    let (report, sample) = try reportingAccess(path, writing: !dryRun) {
      try EventStore.upcast(
        at: path, through: models, mappings: mappings, policies: policies, mappingFiles: mappingFiles,
        modelFiles: modelFiles, dryRun: dryRun, batchEvents: batch, discardingNewerCommits: a.flag("discard-newer"),
        progress: { bar.update($0) })
    }
    bar.finish()
    io.print(
      (dryRun ? "dry run (nothing written): " : "") + "upcast v\(report.sourceVersion) -> v\(report.destinationVersion)"
        + (report.resumed ? " (resumed)" : ""))
    io.print("  read     \(report.commitsRead) commits, \(report.eventsRead) events")
    io.print("  wrote    \(report.commitsWritten) commits, \(report.eventsWritten) events")
    for (e, n) in report.objectsPerEntity { io.print("  objects  \(e): \(n)") }
    io.print("  time     \(String(format: "%.3f", report.seconds)) s")
    if dryRun {
      io.print("sample of the result:")
      for line in sample { io.print("  " + line) }
    } else {
      io.print("the store is now at version \(report.destinationVersion); 'eventtool rollback \(path)' switches back")
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
