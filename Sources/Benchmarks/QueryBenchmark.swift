import EventGraph
import Foundation

/// Issue 3's figures: predicate evaluations per second on an in-memory object, and fetch
/// latency with and without an index on a large store.
enum QueryBenchmark {
  /// An object source over plain arrays: what the evaluator costs without storage.
  struct Rows: QueryObjectSource {
    let rows: [[Value?]]
    func value(of object: Int, attribute: PropertyID) -> Value? { rows[object][Int(attribute.rawValue)] }
    func related(to object: Int, relationship: PropertyID) -> [Int] { [] }
  }

  static func model() throws -> Model {
    try Model(
      name: "Bench", version: 1,
      entities: [
        EntityDescription(
          name: "AddressBook",
          attributes: [
            AttributeDescription(name: "firstName", type: .string),
            AttributeDescription(name: "lastName", type: .string, isIndexed: true),
            AttributeDescription(name: "phone1", type: .string, isOptional: true),
            AttributeDescription(name: "phone2", type: .string, isOptional: true),
            AttributeDescription(name: "age", type: .int16, isOptional: true),
            AttributeDescription(name: "zip", type: .int64, isIndexed: true),
            AttributeDescription(name: "city", type: .int64),
          ])
      ])
  }

  /// 1,024 address-book rows, a quarter without phone1 and a fifth without phone2: what
  /// the predicate figures evaluate, built once so that storage costs nothing.
  static func rows() -> [[Value?]] {
    (0..<1024).map { (i: Int) -> [Value?] in
      let last: Value = .string(i % 3 == 0 ? "Tanaka\(i)" : "Suzuki\(i)")
      let phone1: Value? = i % 4 == 0 ? nil : .string("03-\(i)")
      let phone2: Value? = i % 5 == 0 ? nil : .string("090-\(i)")
      let age: Value = .int16(Int16(i % 90))
      return [.string("f\(i)"), last, phone1, phone2, age, .int64(Int64(i)), .int64(Int64(i))]
    }
  }

  /// The two predicates the evaluation figures run, compiled, each with its label: a cheap
  /// one and one with a case-insensitive string match.
  static func predicates(_ m: Model) throws -> [(label: String, predicate: CompiledPredicate)] {
    guard let e = m.entity(named: "AddressBook") else {
      throw BaselineError(workload: "query", message: "no AddressBook entity")
    }
    return try [
      ("phone1 != nil || phone2 != nil", "phone1 != nil || phone2 != nil"),
      ("three clauses with BEGINSWITH[c]", "lastName BEGINSWITH[c] 'ta' AND age >= 18 AND phone2 != nil"),
    ].map { label, text in (label, try CompiledPredicate.compile(text, entity: e.id, model: m)) }
  }

  /// Evaluates `predicate` `times` times over the rows in turn; throws when nothing matched,
  /// which would mean the evaluation was not the one meant.
  static func evaluate(_ predicate: CompiledPredicate, times: Int, in source: Rows) throws {
    var hits = 0
    for i in 0..<times where try predicate.evaluate(i & 1023, in: source) { hits += 1 }
    guard hits > 0 else { throw BaselineError(workload: "query", message: "no hits") }
  }

  /// Inserts `objects` address-book entries in commits of 10,000: `zip` and `city` the
  /// entry's number (one indexed, one not), `lastName` one of 1,000 (indexed).
  static func fill(_ store: EventStore, objects: Int) throws {
    var i = 0
    while i < objects {
      let end = min(objects, i + 10_000)
      let start = i
      try store.write { tx in
        for k in start..<end {
          _ = try tx.insert(
            "AddressBook",
            [
              "firstName": .string("f\(k)"), "lastName": .string("L\(k % 1000)"), "zip": .int64(Int64(k)),
              "city": .int64(Int64(k)),
            ])
        }
      }
      i = end
    }
  }

  /// `count` indexed equality fetches (`zip == probe`, `probe + 1`, …), each checked to
  /// find its one object through the index.
  static func indexedFetches(_ store: EventStore, from probe: Int64, count: Int) throws {
    for k in 0..<count {
      let r = try store.fetch("AddressBook", where: "zip == \(probe + Int64(k))")
      guard r.objects.count == 1, r.index == "zip" else {
        throw BaselineError(workload: "fetch", message: "indexed fetch")
      }
    }
  }

  static func run(objects: Int, table: inout BenchmarkTable) throws {
    let m = try model()
    let source = Rows(rows: rows())
    for (label, p) in try predicates(m) {
      let n = 20_000_000 / (label.hasPrefix("three") ? 20 : 1)
      let r = try measure(operations: n) { try evaluate(p, times: n, in: source) }
      table.add("evaluations/s: \(label)", r, unit: "evals/s")
    }

    // Fetch latency on a store of `objects` objects: indexed equality vs a scan.
    let dir = try temporaryDirectory(prefix: "bench-fetch")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(at: dir + "/s", model: m, options: StoreOptions(durability: .relaxed))
    try fill(store, objects: objects)
    let probe = Int64(objects / 2)
    let indexed = try measure(operations: 200) { try indexedFetches(store, from: probe, count: 200) }
    let scanned = try measure(operations: 3) {
      for k in 0..<3 {
        let r = try store.fetch("AddressBook", where: "city == \(probe + Int64(k))")
        guard r.objects.count == 1, r.index == nil else {
          throw BaselineError(workload: "fetch", message: "scan fetch")
        }
      }
    }
    // A page of 10 in an order an index gives (lastName) beside one it does not (firstName).
    var examined = 0
    let ordered = try measure(operations: 20) {
      for _ in 0..<20 {
        let r = try store.fetch("AddressBook", sortedBy: [SortDescriptor("lastName")], limit: 10)
        guard r.objects.count == 10 else { throw BaselineError(workload: "fetch", message: "ordered page") }
        examined = r.examined
      }
    }
    // The same page descending by an int64 (the index read backwards), and an indexed
    // equality through a $variable (bound before the index is chosen).
    var examinedDescending = 0
    let descending = try measure(operations: 20) {
      for _ in 0..<20 {
        let r = try store.fetch("AddressBook", sortedBy: [SortDescriptor("zip", ascending: false)], limit: 10)
        guard r.objects.count == 10, r.index == "zip" else {
          throw BaselineError(workload: "fetch", message: "descending page")
        }
        examinedDescending = r.examined
      }
    }
    let bound = try measure(operations: 200) {
      for k in 0..<200 {
        let r = try store.fetch("AddressBook", where: "zip == $z", variables: ["z": .int64(probe + Int64(k))])
        guard r.objects.count == 1, r.index == "zip" else {
          throw BaselineError(workload: "fetch", message: "variable fetch")
        }
      }
    }
    let unordered = try measure(operations: 2) {
      for _ in 0..<2 {
        let r = try store.fetch("AddressBook", sortedBy: [SortDescriptor("firstName")], limit: 10)
        guard r.objects.count == 10 else { throw BaselineError(workload: "fetch", message: "sorted page") }
      }
    }
    // Point reads: one object by identity, in one snapshot, spread over the store.
    let ids = try store.read { try $0.objects(of: "AddressBook") }
    let reads = 20_000
    let point = try measure(operations: reads) {
      try store.read { s in
        for k in 0..<reads where try s.object(ids[(k &* 7_919) % ids.count]) == nil {
          throw BaselineError(workload: "point read", message: "missing object")
        }
      }
    }
    table.add(
      "point read latency, one object by identity (\(objects) objects)", value: point.seconds / Double(reads) * 1e6,
      unit: "µs")
    table.add(
      "fetch latency, indexed equality (\(objects) objects)", value: indexed.seconds / 200 * 1e6, unit: "µs")
    table.add(
      "fetch latency, scan (\(objects) objects)", value: scanned.seconds / 3 * 1e6, unit: "µs")
    table.add(
      "indexed fetch speed-up over the scan", value: (scanned.seconds / 3) / (indexed.seconds / 200), unit: "×")
    table.add(
      "fetch latency, first 10 by an indexed order (\(objects) objects)", value: ordered.seconds / 20 * 1e6,
      unit: "µs")
    table.add("  objects it examined", value: Double(examined), unit: "objects")
    table.add(
      "fetch latency, first 10 by an indexed int64 descending (\(objects) objects)",
      value: descending.seconds / 20 * 1e6, unit: "µs")
    table.add("  objects it examined", value: Double(examinedDescending), unit: "objects")
    table.add(
      "fetch latency, indexed equality through a $variable (\(objects) objects)", value: bound.seconds / 200 * 1e6,
      unit: "µs")
    table.add(
      "fetch latency, first 10 by an order no index gives (\(objects) objects)", value: unordered.seconds / 2 * 1e6,
      unit: "µs")
  }
}
