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
    for start in stride(from: 0, to: count, by: 10_000) {
      try store.write { tx in for k in start..<min(count, start + 10_000) { try tx.insert(person(k)) } }
    }
    let predicate = "zip >= 0"
    // The best of five rounds each, taken in turn: the machine's other work moves single runs.
    var dynamic: Measurement? = nil
    var typed: Measurement? = nil
    for _ in 0..<5 {
      dynamic = best(dynamic, try dynamicFetch(store, predicate, count))
      typed = best(typed, try typedFetch(store, predicate, count))
    }
    guard let typed, let dynamic else { return }
    table.add(
      "typed fetch, Record (\(count) objects, where \(predicate))", typed, unit: "records/s", baseline: dynamic,
      baselineName: "dynamic fetch + object(_:)")
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

  static func typedFetch(_ store: EventStore, _ predicate: String, _ count: Int) throws -> Measurement {
    try measure(operations: count) {
      let records = try store.fetch(Person.self, where: predicate)
      guard records.count == count else { throw BaselineError(workload: "fetch", message: "typed fetch") }
    }
  }
}
