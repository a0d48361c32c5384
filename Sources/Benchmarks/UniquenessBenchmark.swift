import EventGraph
import Foundation

/// Issue 18's figure: what a uniqueness constraint costs batched appends, beside the same
/// appends into the same model without it, in one run.
extension StoreBenchmark {
  /// The store benchmark's model, `a1` unique, indexed or neither.
  static func model(unique: Bool, indexed: Bool = false) throws -> Model {
    let attrs = (1...9).map {
      AttributeDescription(name: "a\($0)", type: .string, isOptional: true, isIndexed: indexed && $0 == 1)
    }
    return try Model(
      name: "Bench", version: 1,
      entities: [EntityDescription(name: "Item", attributes: attrs, uniquenessConstraints: unique ? [["a1"]] : [])])
  }

  /// Batched appends (1,000 events a commit: 100 objects × insert + 9 sets of 100 bytes, `a1`
  /// different for each object) into three fresh stores, one whose `a1` is unique, one
  /// whose `a1` is indexed (the other entry kept per object, for comparison), in rounds whose
  /// order turns, each side a quarter of the events.
  static func runUniqueness(events: Int, in directory: String, table: inout BenchmarkTable) throws {
    let value = String(repeating: "v", count: Baselines.valueSize)
    let plain = try EventStore.create(at: directory + "/plain", model: try model(unique: false))
    let unique = try EventStore.create(at: directory + "/unique", model: try model(unique: true))
    let indexed = try EventStore.create(at: directory + "/indexed", model: try model(unique: false, indexed: true))
    let rounds = 4
    let perRound = max(1000, events / rounds / 1000 * 1000)
    var next = 0
    func append(_ store: EventStore) throws -> Measurement {
      try measure(operations: perRound) {
        for _ in 0..<perRound / 1000 {
          try store.write { tx in
            for _ in 0..<100 {
              next += 1
              let o = try tx.insert("Item")
              // The unique value leads, so keys differ early and spread over the index.
              try tx.set(o, "a1", .string("\(next)-" + value))
              for a in 2...9 { try tx.set(o, "a\(a)", .string(value)) }
            }
          }
        }
      }
    }
    let zero = Measurement(operations: 0, seconds: 0)
    var (without, with, withIndex) = (zero, zero, zero)
    var (ratios, indexRatios): ([Double], [Double]) = ([], [])
    for round in 0..<rounds {
      var (w, u, x) = (zero, zero, zero)
      for side in (0..<3).map({ ($0 + round) % 3 }) {
        switch side {
        case 0: w = try append(plain)
        case 1: u = try append(unique)
        default: x = try append(indexed)
        }
      }
      without += w
      with += u
      withIndex += x
      ratios.append(w.rate / u.rate)
      indexRatios.append(w.rate / x.rate)
    }
    guard try unique.read({ try $0.objects(of: "Item").count }) == rounds * perRound / 10 else {
      throw BaselineError(workload: "uniqueness", message: "not every object landed")
    }
    table.add(
      "batched appends, a1 unique", with, unit: "events/s", baseline: without, baselineName: "no constraint")
    table.add(
      "cost of the uniqueness constraint, median of \(rounds) rounds (time with / without)",
      value: median(ratios.sorted()), unit: "x")
    table.add(
      "batched appends, a1 indexed (for comparison)", withIndex, unit: "events/s", baseline: without,
      baselineName: "no index")
    table.add(
      "cost of an index on a1, median of \(rounds) rounds (time with / without)", value: median(indexRatios.sorted()),
      unit: "x")
  }
}
