import EventGraph
import Foundation

/// Issue 18's figures: a typed fetch and a typed insert through ``Record`` beside the
/// dynamic API doing the same work.
enum RecordBenchmark {
  struct Person: Record {
    static let entityName = "AddressBook"
    var firstName: String
    var lastName: String
    var phone1: String?
    var phone2: String?
    var age: Int16?
    var zip: Int64
    var city: Int64
  }

  /// ``Person`` as `eventtool codegen` writes a record type: the same properties, read by
  /// position through `init(reading:)` (no `Decoder`).
  struct GeneratedPerson: Record {
    static let entityName = "AddressBook"
    var firstName: String
    var lastName: String
    var phone1: String?
    var phone2: String?
    var age: Int16?
    var zip: Int64
    var city: Int64
  }

  static func person(_ k: Int) -> Person {
    Person(
      firstName: "f\(k)", lastName: "L\(k % 1000)", phone1: k % 4 == 0 ? nil : "03-\(k)", phone2: nil,
      age: Int16(k % 90), zip: Int64(k), city: Int64(k))
  }

  static func dynamicValues(_ p: Person) -> KeyValuePairs<String, Value?> {
    [
      "firstName": .string(p.firstName), "lastName": .string(p.lastName), "phone1": p.phone1.map { .string($0) },
      "phone2": p.phone2.map { .string($0) }, "age": p.age.map { .int16($0) }, "zip": .int64(p.zip),
      "city": .int64(p.city),
    ]
  }

  /// Inserts of `count` objects in commits of 10,000, typed and dynamic, each into a fresh
  /// store; the best of three rounds each.
  static func insert(count: Int, table: inout BenchmarkTable) throws {
    func timed(_ insert: @escaping (Transaction, Int) throws -> Void) throws -> Measurement {
      let dir = try temporaryDirectory(prefix: "bench-records")
      defer { try? removeDirectory(dir) }
      let store = try EventStore.create(
        at: dir + "/s", model: try QueryBenchmark.model(), options: StoreOptions(durability: .relaxed))
      return try measure(operations: count) {
        for start in stride(from: 0, to: count, by: 10_000) {
          try store.write { tx in for k in start..<min(count, start + 10_000) { try insert(tx, k) } }
        }
      }
    }
    let people = (0..<count).map(person)
    var dynamicBest: Measurement? = nil
    var typedBest: Measurement? = nil
    for _ in 0..<3 {
      dynamicBest = best(dynamicBest, try timed { tx, k in _ = try tx.insert("AddressBook", dynamicValues(people[k])) })
      typedBest = best(typedBest, try timed { tx, k in _ = try tx.insert(people[k]) })
    }
    guard let dynamic = dynamicBest, let typed = typedBest else { return }
    table.add(
      "typed insert, Record (\(count) objects)", typed, unit: "objects/s", baseline: dynamic,
      baselineName: "dynamic insert")
  }

  /// A fetch of every object of a store of `count`, decoded as records, beside the dynamic
  /// fetch that reads each object's state.
  static func fetch(count: Int, table: inout BenchmarkTable) throws {
    let dir = try temporaryDirectory(prefix: "bench-records")
    defer { try? removeDirectory(dir) }
    let store = try EventStore.create(
      at: dir + "/s", model: try QueryBenchmark.model(), options: StoreOptions(durability: .relaxed))
    try fill(store, count: count)
    let predicate = "zip >= 0"
    // The best of five rounds each, taken in turn: the machine's other work moves single runs.
    var dynamic: Measurement? = nil
    var typed: Measurement? = nil
    var generated: Measurement? = nil
    var floor: Measurement? = nil
    for _ in 0..<5 {
      dynamic = best(dynamic, try dynamicFetch(store, predicate, count))
      typed = best(typed, try typedFetch(Person.self, store, predicate, count))
      generated = best(generated, try typedFetch(GeneratedPerson.self, store, predicate, count))
      floor = best(floor, try identitiesFetch(store, predicate, count))
    }
    guard let typed, let dynamic, let generated, let floor else { return }
    table.add(
      "typed fetch, Record (\(count) objects, where \(predicate))", typed, unit: "records/s", baseline: dynamic,
      baselineName: "dynamic fetch + object(_:)")
    table.add(
      "typed fetch, init(reading:) as generated (\(count) objects)", generated, unit: "records/s",
      baseline: dynamic, baselineName: "dynamic fetch + object(_:)")
    table.add(
      "typed fetch, init(reading:) vs the dynamic fetch alone (\(count) objects)", generated, unit: "records/s",
      baseline: floor, baselineName: "dynamic fetch, identities only")
  }

  /// Inserts `person(0..<count)` as records, in commits of 10,000: the store the typed
  /// fetch figures read.
  static func fill(_ store: EventStore, count: Int) throws {
    for start in stride(from: 0, to: count, by: 10_000) {
      try store.write { tx in for k in start..<min(count, start + 10_000) { try tx.insert(person(k)) } }
    }
  }

  static func best(_ a: Measurement?, _ b: Measurement) -> Measurement {
    guard let a else { return b }
    return a.seconds <= b.seconds ? a : b
  }

  static func dynamicFetch(_ store: EventStore, _ predicate: String, _ count: Int) throws -> Measurement {
    try measure(operations: count) {
      try store.read { s in
        let ids = try s.fetch("AddressBook", where: predicate).objects
        var n = 0
        for o in ids where try s.object(o) != nil { n += 1 }
        guard n == count else { throw BaselineError(workload: "fetch", message: "dynamic fetch gave \(n)") }
      }
    }
  }

  /// The dynamic fetch without reading the objects again: the index range and one state
  /// per object (the fetch reads each candidate's state), what a typed fetch starts from.
  static func identitiesFetch(_ store: EventStore, _ predicate: String, _ count: Int) throws -> Measurement {
    try measure(operations: count) {
      let ids = try store.read { try $0.fetch("AddressBook", where: predicate).objects }
      guard ids.count == count else { throw BaselineError(workload: "fetch", message: "fetch gave \(ids.count)") }
    }
  }

  static func typedFetch<R: Record>(_ type: R.Type, _ store: EventStore, _ predicate: String, _ count: Int) throws
    -> Measurement
  {
    try measure(operations: count) {
      let records = try store.fetch(R.self, where: predicate)
      guard records.count == count else { throw BaselineError(workload: "fetch", message: "typed fetch") }
    }
  }
}

extension RecordBenchmark.GeneratedPerson {
  init(reading values: RecordValues) throws {
    self.firstName = try values.value(0)
    self.lastName = try values.value(1)
    self.phone1 = try values.optional(2)
    self.phone2 = try values.optional(3)
    self.age = try values.optional(4)
    self.zip = try values.value(5)
    self.city = try values.value(6)
  }
}
