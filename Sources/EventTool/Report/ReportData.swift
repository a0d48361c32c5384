import EventGraph
internal import EventGraphText
import Foundation

/// What `eventtool report` puts on its page, read from one snapshot of the store: the
/// summary, the model, the commit timeline in buckets, the consumers, and the objects of
/// the browser with their history and their state after each commit of it.
struct ReportData {
  struct Limits {
    /// The most bytes the object browser's data may take; objects past it are left out
    /// (counted on the page).
    var maxBytes = 4_000_000
    /// The most commits of one object's history the browser shows (the latest ones).
    var maxHistory = 100
    /// The buckets of the timeline.
    var buckets = 120
  }

  var summary: [(String, String)] = []
  var entities: [(name: String, count: Int)] = []
  var consumers: [(name: String, lag: UInt64)] = []
  /// The timeline: each bucket's first commit time, its commits and events.
  var timeline: [(time: Date, commits: Int, events: Int)] = []
  /// Marks on the timeline: the bucket of the commit each marks, and its text.
  var marks: [(bucket: Int, text: String)] = []
  /// The objects of the browser, as JSON.
  var objects: [JSON] = []
  var objectsLeftOut = 0
  var objectsConsidered = 0

  /// Reads everything from `store`; `root` limits the browser to a subgraph.
  static func read(_ store: EventStore, root: String?, limits: Limits) throws -> ReportData {
    var data = ReportData()
    let stats = try store.statistics()
    data.summary = [
      ("Store", stats.path), ("Identity", stats.storeID), ("Model", "\(stats.modelName) v\(stats.modelVersion)"),
      ("Versions", stats.models.map { "v\($0.version)" }.joined(separator: ", ")),
      ("Commits", "\(stats.commits)"), ("Events", "\(stats.events)"),
      ("File", "\(stats.fileSize) bytes (\(stats.usedSize) used, map \(stats.mapSize))"),
    ]
    if let base = stats.base {
      data.summary.append(
        ("History", "truncated before sequence \(base.lastSequence + 1) on \(ISO8601.format(base.truncatedAt))"))
    }
    if let role = try store.replicationRole() { data.summary.append(("Replication", "\(role)")) }
    data.entities = stats.objectsPerEntity.map { ($0.entity, $0.count) }
    let metrics = try store.metrics()
    data.consumers =
      metrics.consumerLag.map { ($0.name, $0.events) } + metrics.groups.map { ("group " + $0.name, $0.lag) }
    try store.read { s in
      try data.readTimeline(s, commits: stats.commits, buckets: limits.buckets)
      try data.readObjects(s, root: root, limits: limits)
    }
    return data
  }

  /// One walk of the log: commits and events per bucket of commit numbers, the base, the
  /// erasures, and where an upcast's replayed commits end (the switch to this version).
  private mutating func readTimeline(_ s: Snapshot, commits: UInt64, buckets: Int) throws {
    let perBucket = max(1, Int((commits + UInt64(buckets) - 1) / UInt64(buckets)))
    var lastReplayed: (commit: Commit, bucket: Int)?
    var erasures = 0
    // A truncated log starts at its base, whose number is that of the last commit it folded.
    var first: UInt64?
    try s.forEachCommit { c in
      let start = first ?? c.number
      first = start
      let i = Int((c.number - start) / UInt64(perBucket))
      while i >= timeline.count { timeline.append((c.time, 0, 0)) }
      timeline[i].commits += 1
      timeline[i].events += c.events.count
      if let base = c.metadata.base {
        marks.append((i, "base: history before sequence \(base.lastSequence + 1) truncated"))
      }
      if c.metadata.sourceCommit != nil { lastReplayed = (c, i) }
      if c.events.contains(where: { if case .erase = $0 { true } else { false } }) { erasures += 1 }
    }
    if let (c, i) = lastReplayed {
      marks.append((i, "upcast: commits 1–\(c.number) replayed from the previous version; switched after it"))
    }
    if erasures > 0 { summary.append(("Erasures", "\(erasures) commits erase a subject")) }
  }

  /// The browser's objects: the subgraph of `root` (breadth first along relationships),
  /// or every live object, until the data reaches its bound.
  private mutating func readObjects(_ s: Snapshot, root: String?, limits: Limits) throws {
    var queue: [ObjectID] = []
    var seen: Set<ObjectID> = []
    if let root {
      queue = [try s.resolve(root)]
      seen = Set(queue)
    } else {
      for e in s.model.entities {
        for o in try s.objects(of: e.name) where seen.insert(o).inserted { queue.append(o) }
      }
    }
    var bytes = 0
    var i = 0
    while i < queue.count {
      let id = queue[i]
      i += 1
      objectsConsidered += 1
      guard bytes < limits.maxBytes, let (json, related) = try Self.object(id, in: s, maxHistory: limits.maxHistory)
      else {
        objectsLeftOut += 1
        continue
      }
      let size = json.serialized().utf8.count
      guard bytes + size <= limits.maxBytes else {
        objectsLeftOut += 1
        bytes = limits.maxBytes
        continue
      }
      bytes += size
      objects.append(json)
      if root != nil {
        for r in related where seen.insert(r).inserted { queue.append(r) }
      }
    }
  }

  /// One object's entry: its name, and per commit of its history (the latest
  /// `maxHistory`) the commit, its time, the object's events in it and its state after it.
  private static func object(_ id: ObjectID, in s: Snapshot, maxHistory: Int) throws -> (JSON, [ObjectID])? {
    let name = s.display(id)
    var history: [JSON] = []
    var related: Set<ObjectID> = []
    for first in try s.history(of: id).suffix(maxHistory) {
      for c in try LogCommand.commits(at: first, in: s) {
        let changes = c.sequencedEvents.filter { LogCommand.concerns($0.1, id) }.map { s.text($0.1, sequence: $0.0) }
        var state: [JSON] = []
        if let v = try s.object(id, asOf: c.lastSequence) {
          let record = try s.exportRecord(v)
          for (n, value) in record.attributes {
            state.append(.array([.string(n), .string(value.displayText)]))
          }
          for r in record.relationships {
            state.append(
              .array([
                .string(r.name),
                .string(r.toMany ? "[" + r.targets.joined(separator: ", ") + "]" : r.targets.first ?? "nil"),
              ]))
            for t in r.targets { if let (_, o) = ObjectID.parse(t) { related.insert(o) } }
          }
        }
        history.append(
          .object([
            JSONField("commit", .int(Int64(c.number))), JSONField("time", .string(ISO8601.format(c.time))),
            JSONField("changes", .array(changes.map { .string($0) })),
            JSONField("state", .array(state)), JSONField("deleted", .bool(state.isEmpty)),
          ]))
      }
    }
    guard !history.isEmpty else { return nil }
    return (.object([JSONField("id", .string(name)), JSONField("history", .array(history))]), related.sorted())
  }
}
