import EventGraph
internal import EventGraphText

/// `eventtool salvage`: a new store from what a damaged one still holds.
struct SalvageCommand: ToolCommand {
  let spec = CommandSpec(
    name: "salvage", abstract: "Write a new, verified store from every commit a damaged store still holds.",
    discussion:
      "Reads the damaged store without LMDB's map (so no damage can crash it), from whichever meta page gives the longer log, and appends every commit record of the active log that passes its checksum, in order; where that log ends short of what the store committed (a damaged record, a lost meta page), it scans every page of the file for records that follow it. The new store's projections are made by replaying them, and it is verified. Prints what was recovered, what was lost, and, when a meta page is lost, that what came after cannot be vouched for. The damaged store is not changed.",
    positionals: [PositionalSpec("STORE", help: "The damaged store directory.")],
    options: [
      OptionSpec("out", valueName: "DIR", help: "The new store's directory (it must not exist).", isRequired: true),
      OptionSpec("json", help: "Print the report as JSON."),
    ],
    examples: ["eventtool salvage book.store --out book.salvaged"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    guard let out = a.value("out") else { throw ToolError.usage("missing --out") }
    let bar = io.progress("salvage", total: 0)
    let r = try EventStore.salvage(at: path, into: out) { bar.update($0) }
    bar.finish()
    let check = try EventStore(path: out, options: StoreOptions(readOnly: true)).verify()
    guard check.isOK else {
      for p in check.problems { io.printError(p) }
      throw ToolError.failed("the salvaged store at \(out) does not verify")
    }
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("out", .string(out)), JSONField("transaction", .int(Int64(r.transaction))),
          JSONField("olderMetaPage", .bool(r.usedOlderMetaPage)), JSONField("version", .int(Int64(r.modelVersion))),
          JSONField("commits", .int(Int64(r.commits))), JSONField("events", .int(Int64(r.events))),
          JSONField("lastSequence", .int(Int64(r.lastSequence))), JSONField("commitsLost", .int(Int64(r.commitsLost))),
          JSONField("stoppedBecause", r.stoppedBecause.map { .string($0) } ?? .null),
          JSONField("foundByScan", .int(Int64(r.foundByScan))),
          JSONField("lossUnknown", r.lossUnknown.map { .string($0) } ?? .null),
          JSONField("complete", .bool(r.isComplete)),
          JSONField("versionsLeftBehind", .array(r.versionsLeftBehind.map { .int(Int64($0)) })),
          JSONField("checkpointsLeftBehind", .array(r.checkpointsLeftBehind.map { .string($0) })),
        ]).serialized())
      return
    }
    let meta = r.usedOlderMetaPage ? "the older meta page" : "the newest meta page"
    let range = r.commits == 0 ? "" : " (sequences 1...\(r.lastSequence))"
    io.print(
      "salvaged \(r.commits) commits, \(r.events) events\(range) of model version \(r.modelVersion) into \(out), from \(meta) (transaction \(r.transaction)); verified"
    )
    if r.foundByScan > 0 {
      io.print(
        "found by scanning the file: the last \(r.foundByScan) of those commits, on pages the meta page's log does not reach"
      )
    }
    if let why = r.stoppedBecause {
      io.print("lost: \(r.commitsLost) commit(s) the log recorded after sequence \(r.lastSequence): \(why)")
    }
    if let why = r.lossUnknown {
      io.print("lost: not known after sequence \(r.lastSequence): \(why)")
    }
    if r.isComplete { io.print("lost: nothing of the log") }
    if !r.versionsLeftBehind.isEmpty {
      io.print(
        "not carried: model version(s) \(r.versionsLeftBehind.map(String.init).joined(separator: ", ")) and their logs")
    }
    if !r.checkpointsLeftBehind.isEmpty {
      io.print(
        "not carried: \(r.checkpointsLeftBehind.joined(separator: ", ")) (they may point past the recovered log)")
    }
  }
}
