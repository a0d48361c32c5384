import EventGraph
internal import EventGraphText

/// `eventtool truncate`: the commits before a cut folded into a base (Docs/retention.md).
struct TruncateCommand: ToolCommand {
  let spec = CommandSpec(
    name: "truncate",
    abstract: "Fold the commits before a cut into one base commit that holds the graph as they left it.",
    discussion:
      "The base keeps every live object's identity, values, relationships, order and version; every commit after the cut keeps its number, sequences and bytes, and 'verify' proves the store. History before the cut goes: reads as of an earlier state, and consumers positioned before it, are refused from then on. Without a cut, the store's retention policy ('eventtool retention') gives it. The store is then compacted in the same run, when no other process has it open (else the freed pages are reused by later commits, and 'eventtool compact' shrinks the file later); --no-compact leaves the file as it is. One write transaction truncates: killed at any moment, the store is as it was or truncated, whole.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("before", valueName: "SEQ", help: "Cut before the commit that starts at event SEQ."),
      OptionSpec(
        "older-than", valueName: "DURATION",
        help: "Cut before the first commit younger than DURATION (90d, 12h, 30m, 45s, 2w, or 1d12h)."),
      OptionSpec("keep-commits", valueName: "N", help: "Keep the last N commits."),
      OptionSpec("dry-run", help: "Print what would go (the same replay) and write nothing."),
      OptionSpec("no-compact", help: "Leave the file's size as it is."),
      OptionSpec("json", help: "Print the report as JSON."),
    ],
    examples: [
      "eventtool truncate book.store --older-than 90d --dry-run", "eventtool truncate book.store --keep-commits 10000",
      "eventtool truncate book.store",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let cut = try Self.cut(a)
    let dryRun = a.flag("dry-run")
    var compaction: CompactionReport? = nil
    var note: String? = nil
    let report: TruncationReport
    do {
      let store = try openStore(path, writing: !dryRun)
      if let cut {
        report = try store.truncate(cut, dryRun: dryRun)
      } else {
        guard try store.retentionPolicy() != nil else {
          throw ToolError.failed(
            "\(path) has no retention policy: give --before, --older-than or --keep-commits, or record one with 'eventtool retention \(path) --keep DURATION'"
          )
        }
        report = try store.applyRetention(dryRun: dryRun)
      }
    }
    if !dryRun && !report.isEmpty && !a.flag("no-compact") {
      do {
        compaction = try EventStore.compact(at: path)
      } catch let e as MaintenanceError {
        note = "not compacted: \(e.problem); later commits reuse the freed pages"
      }
    }
    if a.flag("json") {
      var fields = [
        JSONField("store", .string(path)), JSONField("cut", .int(Int64(report.cut))),
        JSONField("commits", .int(Int64(report.commits))), JSONField("events", .int(Int64(report.events))),
        JSONField("baseEvents", .int(Int64(report.baseEvents))), JSONField("objects", .int(Int64(report.objects))),
        JSONField("historyEntries", .int(Int64(report.historyEntries))),
        JSONField("objectsShortened", .int(Int64(report.objectsShortened))),
        JSONField("idempotencyKeys", .int(Int64(report.idempotencyKeys))),
        JSONField("bytesFreed", .int(Int64(report.bytesFreed))), JSONField("dryRun", .bool(dryRun)),
        JSONField("seconds", .double(report.seconds)),
      ]
      if let compaction {
        fields.append(JSONField("sizeBefore", .int(Int64(compaction.sizeBefore))))
        fields.append(JSONField("sizeAfter", .int(Int64(compaction.sizeAfter))))
      }
      if let note { fields.append(JSONField("note", .string(note))) }
      io.print(JSON.object(fields).serialized())
      return
    }
    guard !report.isEmpty else {
      io.print("nothing to truncate in \(path): no commit lies before the cut")
      return
    }
    io.print(
      "\(dryRun ? "would truncate" : "truncated") \(path) before sequence \(report.cut): \(report.commits) commits, \(report.events) events folded into a base of \(report.baseEvents) events (\(report.objects) objects); \(report.historyEntries) history entries of \(report.objectsShortened) objects and \(report.idempotencyKeys) idempotency keys \(dryRun ? "would go" : "removed"); about \(report.bytesFreed) bytes freed (\(CompactCommand.format(report.seconds)) s)"
    )
    if dryRun { io.print("dry run: nothing was written") }
    if let compaction { io.print("compacted: \(compaction.sizeBefore) -> \(compaction.sizeAfter) bytes") }
    if let note { io.print(note) }
  }

  /// The cut the command line gives, `nil` for none (the store's policy).
  static func cut(_ a: ParsedArguments) throws -> TruncationCut? {
    var cuts: [TruncationCut] = []
    if let s = try a.sequence("before") { cuts.append(.before(sequence: s)) }
    if let seconds = try DurationText.option("older-than", a) { cuts.append(.olderThan(seconds: seconds)) }
    if let n = try DurationText.count("keep-commits", a) { cuts.append(.keepCommits(n)) }
    guard cuts.count <= 1 else {
      throw ToolError.usage("--before, --older-than and --keep-commits are three cuts: give one")
    }
    return cuts.first
  }
}

/// `eventtool retention`: the store's retention policy, shown or recorded.
struct RetentionCommand: ToolCommand {
  let spec = CommandSpec(
    name: "retention", abstract: "Show or record how much history the store keeps.",
    discussion:
      "The policy is kept in the store. Nothing is truncated when it is recorded: 'eventtool truncate STORE' applies it, and so does a service that opens the store with a retention schedule (StoreOptions.retention, Docs/retention.md). Without an option, prints the policy.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("keep", valueName: "DURATION", help: "Keep the commits younger than DURATION (90d, 12h, 2w, 1d12h)."),
      OptionSpec("keep-commits", valueName: "N", help: "Keep the last N commits."),
      OptionSpec("off", help: "Keep all history."),
      OptionSpec("json", help: "Print the policy as JSON."),
    ],
    examples: [
      "eventtool retention book.store --keep 90d", "eventtool retention book.store --keep-commits 100000",
      "eventtool retention book.store --off", "eventtool retention book.store",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    var policies: [RetentionPolicy?] = []
    if let seconds = try DurationText.option("keep", a) { policies.append(.keep(seconds: seconds)) }
    if let n = try DurationText.count("keep-commits", a) { policies.append(.keepCommits(n)) }
    if a.flag("off") { policies.append(nil) }
    guard policies.count <= 1 else {
      throw ToolError.usage("--keep, --keep-commits and --off are three policies: give one")
    }
    let store = try openStore(path, writing: !policies.isEmpty)
    if let policy = policies.first { try store.setRetentionPolicy(policy) }
    let policy = try store.retentionPolicy()
    if a.flag("json") {
      io.print(
        JSON.object([JSONField("store", .string(path)), JSONField("retention", Self.json(policy))]).serialized())
      return
    }
    io.print("\(path): \(Self.describe(policy))")
  }

  /// A policy in JSON: `{"keepCommits": N}`, `{"keepSeconds": S}`, or `null` for none.
  static func json(_ policy: RetentionPolicy?) -> JSON {
    switch policy {
    case .keepCommits(let n)?: .object([JSONField("keepCommits", .int(Int64(n)))])
    case .keep(let seconds)?: .object([JSONField("keepSeconds", .double(seconds))])
    case nil: .null
    }
  }

  static func describe(_ policy: RetentionPolicy?) -> String {
    switch policy {
    case .keepCommits(let n)?: "keeps the last \(n) commits"
    case .keep(let seconds)?: "keeps the commits of the last \(DurationText.text(seconds))"
    case nil: "keeps all its history"
    }
  }
}

/// Durations as the command line writes them: a run of whole numbers each followed by a
/// unit, `w`, `d`, `h`, `m` or `s` (`90d`, `1d12h`, `45s`).
enum DurationText {
  static let units: [(Character, Double)] = [("w", 604_800), ("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

  /// The duration option `name` gives, in seconds; `nil` when it is not given.
  static func option(_ name: String, _ a: ParsedArguments) throws -> Double? {
    guard let text = a.value(name) else { return nil }
    guard let seconds = seconds(text) else {
      throw ArgumentError.invalidValue(
        text, for: name, command: a.commandName, expected: "a duration such as 90d, 12h, 30m, 45s, 2w or 1d12h")
    }
    return seconds
  }

  /// The count option `name` gives (0 or more); `nil` when it is not given.
  static func count(_ name: String, _ a: ParsedArguments) throws -> Int? {
    guard let n = try a.int(name) else { return nil }
    guard n >= 0 else {
      throw ArgumentError.invalidValue(String(n), for: name, command: a.commandName, expected: "0 or more")
    }
    return n
  }

  static func seconds(_ text: String) -> Double? {
    var total = 0.0
    var digits = ""
    for c in text {
      if c.isASCII && c.isNumber {
        digits.append(c)
      } else if let unit = units.first(where: { $0.0 == c }), let n = Double(digits), !digits.isEmpty {
        total += n * unit.1
        digits = ""
      } else {
        return nil
      }
    }
    return digits.isEmpty && !text.isEmpty ? total : nil
  }

  /// The duration in days, hours, minutes and seconds (`90d`, `1d12h`).
  static func text(_ seconds: Double) -> String {
    var left = Int(seconds.rounded())
    guard left > 0 else { return "0s" }
    var parts = ""
    for (unit, size) in units.dropFirst() where left >= Int(size) {
      parts += "\(left / Int(size))\(unit)"
      left %= Int(size)
    }
    return parts
  }
}
