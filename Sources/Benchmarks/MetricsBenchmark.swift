import EventGraph
import Foundation

/// `metrics()` and its Prometheus rendering as a scrape calls them (issue 28, item 3):
/// against the read transaction of the log's end that the snapshot needs anyway.
enum MetricsBenchmark {
  static func run(calls: Int, table: inout BenchmarkTable) async throws {
    let directory = try temporaryDirectory(prefix: "eventgraph-metrics")
    defer { try? removeDirectory(directory) }
    let model = try Model(
      json: Array(
        #"{"name": "M", "version": 1, "entities": [{"name": "Item", "attributes": [{"name": "n", "type": "int64"}]}]}"#
          .utf8),
      file: "metrics benchmark")
    let store = try EventStore.create(
      at: directory + "/store", model: model, options: StoreOptions(durability: .relaxed))
    for i in 0..<1_000 { try store.write { tx in try tx.insert("Item", ["n": .int64(Int64(i))]) } }
    for name in ["mailer", "search", "billing"] {
      try await store.consumer(name).acknowledge(through: UInt64(1 + name.count))
    }
    var best = (metrics: 0.0, text: 0.0, floor: 0.0)
    for _ in 0..<3 {
      let m = try measure(operations: calls) { for _ in 0..<calls { _ = try store.metrics() } }
      let snapshot = try store.metrics()
      let t = measure(operations: calls) { for _ in 0..<calls { _ = snapshot.prometheusText() } }
      let f = try measure(operations: calls) { for _ in 0..<calls { _ = try store.read { try $0.logEnd() } } }
      best = (max(best.metrics, m.rate), max(best.text, t.rate), max(best.floor, f.rate))
    }
    table.add(
      "metrics() (3 consumers)", value: 1e6 / best.metrics, unit: "µs/call", baseline: 1e6 / best.floor,
      baselineName: "one read of the log's end")
    table.add("prometheusText() of that snapshot", value: 1e6 / best.text, unit: "µs/call")
  }
}
