import EventGraph
import Foundation

/// Issue 9's import figure: a generated Company/Employee JSON Lines file imported through
/// the call `eventtool import --batch` makes, beside the store's batched appends.
enum ImportBenchmark {
  /// Writes companies of 20 employees, and returns the number of lines.
  ///
  /// Each employee names its company, its department and the company's first employee as
  /// manager: 145 events a company once imported.
  static func companyFile(_ path: String, events: Int) throws -> Int {
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
      throw BaselineError(workload: "import", message: "cannot create \(path)")
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var (chunk, lines, employee) = ("", 0, 0)
    for c in 1...max(1, events / 145) {
      chunk +=
        #"{"id": "c\#(c)", "entity": "Company", "attributes": {"name": "Company \#(c)"}, "relationships": {"departments": ["d\#(c)"]}}"#
        + "\n" + #"{"id": "d\#(c)", "entity": "Department", "attributes": {"name": "Department \#(c)"}}"# + "\n"
      let first = employee + 1
      for k in 0..<20 {
        employee += 1
        let manager = k > 0 ? #", "manager": "e\#(first)""# : ""
        chunk +=
          #"{"id": "e\#(employee)", "entity": "Employee", "attributes": {"name": "Employee \#(employee)", "salary": "\#(1000 + employee)", "badge": "6F9619FF-8B86-D011-B42D-\#(String(format: "%012d", employee))"}, "relationships": {"company": "c\#(c)", "department": "d\#(c)"\#(manager)}}"#
          + "\n"
      }
      lines += 22
      if chunk.utf8.count > 1 << 20 {
        handle.write(Data(chunk.utf8))
        chunk = ""
      }
    }
    handle.write(Data(chunk.utf8))
    return lines
  }

  /// Imports about `events` events in commits of 1,000 objects and adds the rate, with its
  /// ratio to `batched` (the store's batched appends of the same run).
  static func run(events: Int, batched: Measurement, in dir: String, table: inout BenchmarkTable) throws {
    let file = dir + "/company.jsonl"
    let lines = try companyFile(file, events: events)
    let store = try EventStore.create(
      at: dir + "/import", model: try Model(contentsOf: Self.companyModelPath()))
    let start = monotonicSeconds()
    let result = try store.importObjects(from: try JSONLinesInput(path: file), options: ImportOptions(batch: 1_000))
    let seconds = monotonicSeconds() - start
    let written = Int(try store.lastSequence())
    guard result.objects == lines else {
      throw BaselineError(workload: "import", message: "imported \(result.objects) of \(lines) objects")
    }
    table.add(
      "import from JSON Lines (Company/Employee, \(written) events, --batch 1000)",
      Measurement(operations: written, seconds: seconds), unit: "events/s", baseline: batched,
      baselineName: "batched appends")
    table.add("anonymous memory after import", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")
  }

  /// Docs/examples/Company.model.json, found from this file's path.
  static func companyModelPath() -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/examples/Company.model.json").path
  }
}
