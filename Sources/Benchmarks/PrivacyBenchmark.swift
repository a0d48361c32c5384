import EventGraph
import Foundation

/// The forgetting issue's figures (Docs/privacy.md, "What a sealed value costs"), each beside
/// the same workload without personal data, in rounds whose order turns: batched appends
/// with 3 of 10 attributes personal, a fetch by a personal attribute's blind index, and a
/// durable erasure beside a durable one-attribute commit.
enum PrivacyBenchmark {
  /// How an item's three personal attributes are keyed.
  enum Keying {
    /// No attribute is personal.
    case none
    /// Each item is its own subject: a new data key per item.
    case ownKey
    /// The item's `owner` is its subject: keys made once, for the owners.
    case ownersKey
  }

  /// Ten string attributes of an item, `a1`…`a3` personal unless `.none`, `a1` indexed; each
  /// item linked to an owner (in every model, so that each makes the same events).
  static func model(_ keying: Keying) throws -> Model {
    let attrs = (1...10).map {
      AttributeDescription(
        name: "a\($0)", type: .string, isOptional: true, isIndexed: $0 == 1, isPersonal: keying != .none && $0 <= 3)
    }
    return try Model(
      name: "Bench", version: 1,
      entities: [
        EntityDescription(
          name: "Item", attributes: attrs,
          relationships: [RelationshipDescription(name: "owner", destination: "Owner", inverse: "items")],
          subject: keying == .ownersKey ? "owner" : nil),
        EntityDescription(
          name: "Owner",
          attributes: [
            AttributeDescription(name: "name", type: .string, isOptional: true, isPersonal: keying != .none)
          ],
          relationships: [
            RelationshipDescription(name: "items", destination: "Item", isToMany: true, inverse: "owner")
          ]),
      ])
  }

  static func run(events: Int, fetches: Int, erasures: Int, table: inout BenchmarkTable) throws {
    let dir = try temporaryDirectory(prefix: "bench-privacy")
    defer { try? removeDirectory(dir) }
    let key = dir + "/bench.key"
    try EventStore.generateKeyFile(at: key)
    let plain = try EventStore.create(at: dir + "/plain", model: try model(.none))
    let personal = try EventStore.create(
      at: dir + "/personal", model: try model(.ownKey), options: StoreOptions(keyFile: key))
    let owned = try EventStore.create(
      at: dir + "/owned", model: try model(.ownersKey), options: StoreOptions(keyFile: key))
    try appends(plain, personal, owned, events: events, table: &table)
    try fetch(plain, personal, fetches: fetches, table: &table)
    try erase(plain, personal, erasures: erasures, table: &table)
    try rotate(subjects: erasures * 20, in: dir, key: key, table: &table)
  }

  /// Key rotation: `subjects` owners (a key each) in a store of their own, the key
  /// rotated back and forth, beside a backup of the same store (the copy a rotation is
  /// usually paired with), in rounds whose order turns.
  private static func rotate(subjects: Int, in dir: String, key: String, table: inout BenchmarkTable) throws {
    let path = dir + "/rotated"
    let other = dir + "/other.key"
    try EventStore.generateKeyFile(at: other)
    do {
      let store = try EventStore.create(at: path, model: try model(.ownKey), options: StoreOptions(keyFile: key))
      try store.write { tx in for i in 0..<subjects { _ = try tx.insert("Owner", ["name": .string("owner \(i)")]) } }
    }
    var keys = (current: key, next: other)
    var backups = 0
    let (rotations, copies, ratios) = try alternating(
      rounds: 4,
      { _ in
        try measure(operations: subjects) {
          try EventStore.rekey(at: path, options: StoreOptions(keyFile: keys.current), newKeyFile: keys.next)
          keys = (keys.next, keys.current)
        }
      },
      { _ in
        backups += 1
        let store = try EventStore(path: path, options: StoreOptions(readOnly: true, keyFile: keys.current))
        return try measure(operations: subjects) { _ = try store.backup(to: dir + "/backup-\(backups)") }
      })
    table.add(
      "key rotation (every subject's key wrapped again, \(subjects) subjects)", rotations, unit: "subjects/s",
      baseline: copies, baselineName: "a backup of the same store")
    table.add(
      "rotation ÷ backup time, median of 4 rounds", value: StoreBenchmark.median(ratios.map { 1 / $0 }.sorted()),
      unit: "x")
  }

  /// Batched appends: 1,200 events a commit (100 items × insert, a link to one of 100
  /// owners, 10 sets of 100 bytes, `a1` different for each item), beside the same into a
  /// model without personal attributes.
  private static func appends(
    _ plain: EventStore, _ personal: EventStore, _ owned: EventStore, events: Int, table: inout BenchmarkTable
  ) throws {
    let value = String(repeating: "v", count: Baselines.valueSize)
    let stores = [plain, personal, owned]
    let owners = try stores.map { store in
      try landed(
        store.write { tx in try (0..<100).map { try tx.insert("Owner", ["name": .string("owner \($0)")]) } })
    }
    let rounds = 4
    let commits = max(1, events / rounds / 1200)
    // Each store's `a1` values count 1, 2, … so that the fetches find one item in each.
    var next = [0, 0, 0]
    func append(_ side: Int) throws -> Measurement {
      try measure(operations: commits * 1200) {
        for _ in 0..<commits {
          try stores[side].write { tx in
            for i in 0..<100 {
              next[side] += 1
              let o = try tx.insert("Item")
              try tx.link(o, "owner", owners[side][i])
              try tx.set(o, "a1", .string("\(next[side])"))
              for a in 2...10 { try tx.set(o, "a\(a)", .string(value)) }
            }
          }
        }
      }
    }
    let zero = Measurement(operations: 0, seconds: 0)
    var totals = [zero, zero, zero]
    var (ownRatios, ownerRatios): ([Double], [Double]) = ([], [])
    for round in 0..<rounds {
      var m = [zero, zero, zero]
      for side in (0..<3).map({ ($0 + round) % 3 }) { m[side] = try append(side) }
      for side in 0..<3 { totals[side] += m[side] }
      ownRatios.append(m[1].rate / m[0].rate)
      ownerRatios.append(m[2].rate / m[0].rate)
    }
    table.add(
      "batched appends, 3 of 10 attributes personal, a new subject (key) per item", totals[1], unit: "events/s",
      baseline: totals[0], baselineName: "none personal")
    table.add(
      "  personal ÷ plain, median of \(rounds) rounds (target ≥ 0.85)",
      value: StoreBenchmark.median(ownRatios.sorted()), unit: "x")
    table.add(
      "batched appends, 3 of 10 personal, sealed under the owners' existing keys", totals[2], unit: "events/s",
      baseline: totals[0], baselineName: "none personal")
    table.add(
      "  personal ÷ plain, median of \(rounds) rounds (no key made)",
      value: StoreBenchmark.median(ownerRatios.sorted()), unit: "x")
  }

  /// Fetches by `a1 == value` for values of objects the appends made: the blind index
  /// beside the plain index.
  private static func fetch(_ plain: EventStore, _ personal: EventStore, fetches: Int, table: inout BenchmarkTable)
    throws
  {
    let count = try plain.read { try $0.objects(of: "Item").count }
    guard try personal.read({ try $0.objects(of: "Item").count }) == count else {
      throw BaselineError(workload: "privacy fetch", message: "the stores hold different items")
    }
    guard count > 0 else { throw BaselineError(workload: "privacy fetch", message: "no objects") }
    var g = SplitMix(seed: 7)
    let wanted = (0..<fetches).map { _ in "\(1 + Int(g.next() % UInt64(count)))" }
    func run(_ store: EventStore) throws -> Measurement {
      try measure(operations: wanted.count) {
        try store.read { s in
          for w in wanted {
            let found = try s.fetch("Item", where: "a1 == $v", variables: ["v": .string(w)])
            guard found.objects.count == 1, found.index == "a1" else {
              throw BaselineError(workload: "privacy fetch", message: "\(w): \(found.objects.count) objects")
            }
          }
        }
      }
    }
    let (without, with, ratios) = try alternating(rounds: 4, { _ in try run(plain) }, { _ in try run(personal) })
    table.add(
      "fetch by a personal attribute's blind index", with, unit: "fetches/s", baseline: without,
      baselineName: "plain index")
    table.add(
      "blind ÷ plain fetch time, median of 4 rounds (target ≤ 1.25)",
      value: StoreBenchmark.median(ratios.sorted()), unit: "x")
  }

  /// Durable commits of one erasure each, beside durable commits of one set each.
  private static func erase(_ plain: EventStore, _ personal: EventStore, erasures: Int, table: inout BenchmarkTable)
    throws
  {
    let subjects = try personal.read { try $0.objects(of: "Item") }
    let targets = try plain.read { try $0.objects(of: "Item") }
    guard subjects.count >= erasures, let target = targets.first else {
      throw BaselineError(workload: "privacy erase", message: "too few objects")
    }
    let rounds = 4
    let perRound = max(1, erasures / rounds)
    var next = 0
    let (sets, erases, ratios) = try alternating(
      rounds: rounds,
      { round in
        try measure(operations: perRound) {
          for i in 0..<perRound { try plain.write { tx in try tx.set(target, "a2", .string("s\(round)-\(i)")) } }
        }
      },
      { _ in
        try measure(operations: perRound) {
          for _ in 0..<perRound {
            let subject = subjects[next]
            next += 1
            guard try personal.write({ tx in try tx.erase(subject) }).value == true else {
              throw BaselineError(workload: "privacy erase", message: "\(subject) was erased already")
            }
          }
        }
      })
    table.add(
      "durable erasures (commit + key slot overwritten and synced)", erases, unit: "commits/s", baseline: sets,
      baselineName: "durable one-attribute commits")
    table.add("time per durable erasure (target < 2 ms)", value: 1000 / erases.rate, unit: "ms")
    table.add(
      "erasure ÷ one-attribute commit time, median of \(rounds) rounds",
      value: StoreBenchmark.median(ratios.sorted()), unit: "x")
  }

  /// Runs `a` and `b` once a round, which goes first turning each round: their totals and
  /// each round's ratio of `b`'s time to `a`'s.
  private static func alternating(
    rounds: Int, _ a: (Int) throws -> Measurement, _ b: (Int) throws -> Measurement
  ) throws -> (a: Measurement, b: Measurement, ratios: [Double]) {
    let zero = Measurement(operations: 0, seconds: 0)
    var (totalA, totalB) = (zero, zero)
    var ratios: [Double] = []
    for round in 0..<rounds {
      var (x, y) = (zero, zero)
      for side in [round % 2, 1 - round % 2] {
        if side == 0 { x = try a(round) } else { y = try b(round) }
      }
      totalA += x
      totalB += y
      ratios.append(x.rate / y.rate)
    }
    return (totalA, totalB, ratios)
  }
}
