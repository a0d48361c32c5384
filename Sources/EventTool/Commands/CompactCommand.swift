import EventGraph
internal import EventGraphText

/// `eventtool compact`: the store's file made as small as its data, in place.
struct CompactCommand: ToolCommand {
  let spec = CommandSpec(
    name: "compact",
    abstract: "Make the store's file as small as its data, keeping every sequence, identity, key and position.",
    discussion:
      "Writes a compacting copy of the store (only the pages in use) inside the store's directory, checks its meta pages and that it opens at the store's log end, and renames it over data.mdb. No other process may have the store open: compact refuses, naming the process, and checks again while it holds the store's lock for the swap. Killed at any moment, it leaves the old file or the new one. With --drop-versions-before N, every model version below N is dropped first (its log, projections and consumer positions), in a transaction of its own; never the active version, and the one 'eventtool rollback' goes back to only with --drop-rollback-version.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("drop-versions-before", valueName: "N", help: "Drop every model version below N first."),
      OptionSpec(
        "drop-rollback-version", help: "Allow dropping the version a rollback would switch back to."),
      OptionSpec("json", help: "Print the report as JSON."),
    ],
    examples: ["eventtool compact book.store", "eventtool compact book.store --drop-versions-before 2"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    _ = try openStore(path)  // its pages checked, and closed again before the compaction opens it
    let r = try reportingAccess(path, writing: true) {
      try EventStore.compact(
        at: path, dropVersionsBefore: try a.int("drop-versions-before"),
        droppingRollbackVersion: a.flag("drop-rollback-version"))
    }
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("store", .string(path)), JSONField("sizeBefore", .int(Int64(r.sizeBefore))),
          JSONField("sizeAfter", .int(Int64(r.sizeAfter))),
          JSONField("droppedVersions", .array(r.droppedVersions.map { .int(Int64($0)) })),
          JSONField("seconds", .double(r.seconds)),
        ]).serialized())
      return
    }
    if !r.droppedVersions.isEmpty {
      io.print("dropped  version(s) \(r.droppedVersions.map(String.init).joined(separator: ", "))")
    }
    io.print("compacted \(path): \(r.sizeBefore) -> \(r.sizeAfter) bytes in \(Self.format(r.seconds)) s")
  }

  static func format(_ seconds: Double) -> String { String(Double(Int(seconds * 1000)) / 1000) }
}

/// `eventtool backup`: a consistent copy of a store that writers keep using, verified.
struct BackupCommand: ToolCommand {
  let spec = CommandSpec(
    name: "backup", abstract: "Copy the store while writers keep committing, then open and verify the copy.",
    discussion:
      "The copy is the store as of one commit (LMDB's environment copy), taken in a read transaction: writers in this and other processes go on. The copy is a store of its own: it is opened alone and verified (pages, checksums, a replay of its log). To restore, stop the service and put the copy's data.mdb in place of the store's (see Docs/guide.md).",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("DIR", help: "The backup's directory: created when missing; it must be empty."),
    ],
    options: [
      OptionSpec("compact", help: "Leave out the free pages: a smaller copy."),
      OptionSpec("json", help: "Print the report as JSON."),
    ],
    examples: ["eventtool backup book.store /backups/book.2026-12-01", "eventtool backup book.store DIR --compact"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"))
    let dir = try a.required("DIR")
    let bar = io.progress("verify", total: Int((try store.read { try $0.logEnd() }).sequence))
    let r = try store.backup(to: dir, compact: a.flag("compact")) { bar.update($0) }
    bar.finish()
    guard r.verification.isOK else {
      for p in r.verification.problems { io.printError(p) }
      throw ToolError.failed("the backup in \(dir) does not verify")
    }
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("directory", .string(dir)), JSONField("size", .int(Int64(r.size))),
          JSONField("commits", .int(Int64(r.commits))), JSONField("events", .int(Int64(r.events))),
          JSONField("verified", .bool(true)), JSONField("seconds", .double(r.seconds)),
        ]).serialized())
      return
    }
    io.print(
      "backed up \(r.commits) commits, \(r.events) events into \(dir) (\(r.size) bytes); the copy opens and verifies (\(CompactCommand.format(r.seconds)) s)"
    )
  }
}
