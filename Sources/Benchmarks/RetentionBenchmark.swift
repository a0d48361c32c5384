import EventGraph
import Foundation

/// Bounded history (issue 26): accounts updated one commit an update, side by side in one
/// run with and without a retention policy applied by the store's schedule; the file's size
/// against commits; truncation's rate beside compaction's and beside a rebuild's replay,
/// which a truncation makes of the commits it drops (its floor).
enum RetentionBenchmark {
  static let model = """
    {"name": "Bank", "version": 1, "entities": [{"name": "Account", "attributes": [{"name": "balance", "type": "int64"}]}]}
    """

  /// One store's run: the file's size after each chunk of commits, and the time the commits took.
  struct Run {
    var sizes: [Int] = []
    var seconds = 0.0
  }

  static func run(
    updates: Int, objects: Int, keep: Int, every: Int, curve: String?, table: inout BenchmarkTable
  ) throws {
    let directory = try temporaryDirectory(prefix: "eventgraph-retention")
    defer { try? removeDirectory(directory) }
    let model = try Model(json: Array(model.utf8), file: "retention benchmark")
    func open(_ name: String, policy: Bool) throws -> (EventStore, [ObjectID]) {
      let path = directory + "/" + name
      do {
        let store = try EventStore.create(at: path, model: model, options: StoreOptions(durability: .relaxed))
        if policy { try store.setRetentionPolicy(.keepCommits(keep)) }
      }
      let store = try EventStore(
        path: path,
        options: StoreOptions(durability: .relaxed, retention: policy ? RetentionSchedule(commits: every) : nil))
      let ids =
        try store.write { tx in
          try (0..<objects).map { i in try tx.insert("Account", ["balance": .int64(Int64(i))]) }
        }.value ?? []
      return (store, ids)
    }
    let (plain, ids) = try open("plain", policy: false)
    let (bounded, _) = try open("bounded", policy: true)
    var runs = (plain: Run(), bounded: Run())
    // Alternating chunks of `every` commits, so that the machine's drift falls on both.
    var done = 0
    while done < updates {
      let n = min(every, updates - done)
      func commits(_ store: EventStore) throws -> Double {
        try measure(operations: n) {
          for i in done..<(done + n) {
            try store.write { tx in try tx.set(ids[i % objects], "balance", .int64(Int64(i))) }
          }
        }.seconds
      }
      runs.plain.seconds += try commits(plain)
      // The schedule's truncations run on a thread of their own, beside these commits.
      runs.bounded.seconds += try commits(bounded)
      done += n
      runs.plain.sizes.append(try fileSize(plain.path))
      runs.bounded.sizes.append(try fileSize(bounded.path))
    }
    var live = 0
    try plain.export { live += $0.utf8.count + 1 }
    if let error = bounded.lastRetentionRun?.error { throw RetentionBenchmarkError(message: error) }
    table.add(
      "\(updates) one-update commits, policy keep \(keep) applied every \(every)",
      value: Double(updates) / runs.bounded.seconds, unit: "commits/s",
      baseline: Double(updates) / runs.plain.seconds, baselineName: "the same commits without a policy")
    table.add(
      "file after \(updates) updates, with the policy (relaxed, no reserve)",
      value: Double(runs.bounded.sizes.last ?? 0) / 1_048_576, unit: "MiB", baseline: Double(live) / 1_048_576,
      baselineName: "the live data (export)")
    // What the policy cannot fold: the `keep` commits it keeps and the `every` commits made
    // before it applies again, at what a commit costs the plain store.
    let perCommit = Double(runs.plain.sizes.last ?? 0) / Double(updates)
    table.add(
      "the floor of a file under that policy (about)", value: perCommit * Double(keep + every) / 1_048_576,
      unit: "MiB", baseline: Double(live) / 1_048_576, baselineName: "the live data (export)")
    table.add(
      "file after \(updates) updates, without a policy", value: Double(runs.plain.sizes.last ?? 0) / 1_048_576,
      unit: "MiB", baseline: Double(live) / 1_048_576, baselineName: "the live data (export)")
    // Truncation's rate on a copy of the whole store, beside a rebuild's replay of the
    // same log and a compaction of it.
    let copy = directory + "/copy"
    try plain.copy(to: copy)
    let events = try plain.lastSequence()
    let replay: Measurement = try {
      let replayCopy = directory + "/replay"
      try plain.copy(to: replayCopy)
      let store = try EventStore(path: replayCopy, options: StoreOptions(durability: .relaxed))
      return try measure(operations: Int(events)) { try store.rebuild() }
    }()
    let report = try {
      let store = try EventStore(path: copy, options: StoreOptions(durability: .relaxed))
      return try store.truncate(.keepCommits(keep))
    }()
    let compaction = try EventStore.compact(at: copy)
    table.add(
      "truncate --keep-commits \(keep) of that store", value: Double(report.events) / report.seconds,
      unit: "events dropped/s", baseline: replay.rate, baselineName: "rebuild: replaying the same log (the floor)")
    table.add(
      "compact of the truncated store", value: Double(events) / compaction.seconds, unit: "events of the log/s")
    if let curve {
      try writeCurve(curve, every: every, plain: runs.plain.sizes, bounded: runs.bounded.sizes, live: live)
    }
  }

  static func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path + "/data.mdb")[.size] as? Int) ?? 0
  }

  /// The size curves as a table (`PATH.tsv`) and a plot (`PATH.svg`, commits across, MiB up).
  static func writeCurve(_ path: String, every: Int, plain: [Int], bounded: [Int], live: Int) throws {
    var tsv = "commits\twithout policy (bytes)\twith policy (bytes)\tlive data (bytes)\n"
    for i in plain.indices { tsv += "\((i + 1) * every)\t\(plain[i])\t\(bounded[i])\t\(live)\n" }
    try tsv.write(toFile: path + ".tsv", atomically: true, encoding: .utf8)
    let (w, h, margin) = (720.0, 420.0, 60.0)
    let top = Double(max(plain.max() ?? 1, 1))
    let count = Double(max(plain.count, 1))
    func point(_ i: Int, _ v: Int) -> String {
      let x = margin + (w - 2 * margin) * Double(i + 1) / count
      let y = h - margin - (h - 2 * margin) * Double(v) / top
      return String(format: "%.1f,%.1f", x, y)
    }
    func line(_ values: [Int], _ color: String) -> String {
      "<polyline fill='none' stroke='\(color)' stroke-width='2' points='\(values.indices.map { point($0, values[$0]) }.joined(separator: " "))'/>"
    }
    let liveY = h - margin - (h - 2 * margin) * Double(live) / top
    let svg = """
      <svg xmlns='http://www.w3.org/2000/svg' width='\(Int(w))' height='\(Int(h))' font-family='sans-serif' font-size='12'>
      <rect width='100%' height='100%' fill='white'/>
      <line x1='\(margin)' y1='\(h - margin)' x2='\(w - margin)' y2='\(h - margin)' stroke='black'/>
      <line x1='\(margin)' y1='\(margin)' x2='\(margin)' y2='\(h - margin)' stroke='black'/>
      <text x='\(w / 2)' y='\(h - 20)' text-anchor='middle'>commits (\(plain.count * every) in all)</text>
      <text x='15' y='\(margin - 20)'>data.mdb (MiB; top \(String(format: "%.1f", top / 1_048_576)))</text>
      \(line(plain, "#c0392b"))
      \(line(bounded, "#2471a3"))
      <line x1='\(margin)' y1='\(liveY)' x2='\(w - margin)' y2='\(liveY)' stroke='#27ae60' stroke-dasharray='4 4'/>
      <text x='\(w - margin - 200)' y='\(margin)' fill='#c0392b'>without a policy</text>
      <text x='\(w - margin - 200)' y='\(margin + 16)' fill='#2471a3'>keep the last commits (schedule)</text>
      <text x='\(w - margin - 200)' y='\(margin + 32)' fill='#27ae60'>live data (export)</text>
      </svg>
      """
    try svg.write(toFile: path + ".svg", atomically: true, encoding: .utf8)
  }
}

struct RetentionBenchmarkError: Error, CustomStringConvertible {
  let message: String
  var description: String { "the retention schedule failed: \(message)" }
}
