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
  /// ratio to `batched` (the store's batched appends of the same run); then the same over
  /// the CPU time of the thread that commits (`batchedCPU`: the appends' own), and the
  /// floor the parse sets: every line read and checked as the import does, nothing written.
  static func run(
    events: Int, batched: Measurement, batchedCPU: Measurement, in dir: String, table: inout BenchmarkTable
  ) throws {
    let file = dir + "/company.jsonl"
    let lines = try companyFile(file, events: events)
    let model = try Model(contentsOf: Self.companyModelPath())
    let store = try EventStore.create(at: dir + "/import", model: model)
    let (start, cpu, process) = (monotonicSeconds(), threadCPUSeconds(), processCPUSeconds())
    let result = try store.importObjects(from: try JSONLinesInput(path: file), options: ImportOptions(batch: 1_000))
    let seconds = monotonicSeconds() - start
    let (threadCPU, processCPU) = (threadCPUSeconds() - cpu, processCPUSeconds() - process)
    let written = Int(try store.lastSequence())
    guard result.objects == lines else {
      throw BaselineError(workload: "import", message: "imported \(result.objects) of \(lines) objects")
    }
    table.add(
      "import from JSON Lines (Company/Employee, \(written) events, --batch 1000)",
      Measurement(operations: written, seconds: seconds), unit: "events/s", baseline: batched,
      baselineName: "batched appends")
    table.add("anonymous memory after import", value: mebibytes(anonymousMemoryBytes()), unit: "MiB")
    table.add(
      "import, events per CPU second of the committing thread", Measurement(operations: written, seconds: threadCPU),
      unit: "events/s", baseline: batchedCPU, baselineName: "batched appends, same")
    table.add(
      "import, events per CPU second of the process (both threads)",
      Measurement(operations: written, seconds: processCPU), unit: "events/s", baseline: batchedCPU,
      baselineName: "batched appends, same")
    var checked = 0
    let parse = try measure(operations: written) {
      checked = try EventStore.checkImportLines(from: try JSONLinesInput(path: file), model: model)
    }
    guard checked == lines else {
      throw BaselineError(workload: "import", message: "checked \(checked) of \(lines) lines")
    }
    table.add(
      "floor: the same lines read, parsed and checked alone, one thread (events they make)", parse,
      unit: "events/s", baseline: batched, baselineName: "batched appends")
    let floor = try EventStore.create(at: dir + "/import-floor", model: model)
    let floorCPU = threadCPUSeconds()
    let made = try measure(operations: written) { try appendCompanies(lines: lines, into: floor) }
    let madeCPU = Measurement(operations: written, seconds: threadCPUSeconds() - floorCPU)
    guard try floor.lastSequence() == UInt64(written) else {
      throw BaselineError(workload: "import", message: "the floor wrote \(try floor.lastSequence()) events")
    }
    table.add(
      "floor: the same objects and links appended with values made beforehand, 1,000 objects a commit", made,
      unit: "events/s", baseline: batched, baselineName: "batched appends")
    table.add(
      "floor: the same, events per CPU second", madeCPU, unit: "events/s", baseline: batchedCPU,
      baselineName: "batched appends, same")
  }

  /// The objects and links of ``companyFile(_:events:)``'s `lines` lines, made through
  /// the transaction API in commits of 1,000 objects, with every value made beforehand:
  /// what the store's writes of an import cost without the reading, parsing and mapping.
  static func appendCompanies(lines: Int, into store: EventStore) throws {
    typealias Employee = (name: Value, salary: Value, badge: Value)
    let employees: [Employee] = (1...(lines / 22 * 20)).map { n in
      let badge = UUID(uuidString: "6F9619FF-8B86-D011-B42D-" + String(format: "%012d", n)) ?? UUID()
      return (.string("Employee \(n)"), .decimal(Decimal(1000 + n)), .uuid(badge))
    }
    var next = 0
    for firstCompany in stride(from: 1, through: lines / 22, by: 45) {
      // 45 companies of 22 objects: 990 objects a commit, the nearest to 1,000.
      try store.write { tx in
        for c in firstCompany..<min(firstCompany + 45, lines / 22 + 1) {
          let company = try tx.insert("Company", ["name": .string("Company \(c)")])
          let department = try tx.insert("Department", ["name": .string("Department \(c)")])
          try tx.link(company, "departments", department)
          var manager: ObjectID?
          for _ in 0..<20 {
            let e = employees[next]
            next += 1
            let employee = try tx.insert("Employee", ["name": e.name, "salary": e.salary, "badge": e.badge])
            try tx.link(employee, "company", company)
            try tx.link(employee, "department", department)
            if let manager { try tx.link(employee, "manager", manager) } else { manager = employee }
          }
        }
      }
    }
  }

  /// Docs/examples/Company.model.json, found from this file's path.
  static func companyModelPath() -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/examples/Company.model.json").path
  }
}
