import CBaselines
import EventGraph
import EventGraphCoreData
import Foundation

/// Issue 17's figure: a Core Data SQLite store of `rows` rows (companies and their
/// employees: a to-one and its ordered to-many inverse) imported through
/// `eventtool import-coredata`'s call, beside the store's own batched appends of the same
/// objects and sqlite3's own full scan of the same tables, in one run.
enum CoreDataBenchmark {
  static let employeesPerCompany = 19

  static let modelXML = #"""
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
        <entity name="Company" representedClassName="Company" syncable="YES">
            <attribute name="name" attributeType="String"/>
            <relationship name="employees" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Employee" inverseName="company" inverseEntity="Employee"/>
        </entity>
        <entity name="Employee" representedClassName="Employee" syncable="YES">
            <attribute name="name" attributeType="String"/>
            <attribute name="salary" attributeType="Integer 64" defaultValueString="0"/>
            <relationship name="company" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Company" inverseName="employees" inverseEntity="Company"/>
        </entity>
    </model>
    """#

  static func run(rows: Int, batch: Int, table: inout BenchmarkTable) throws {
    let dir = try temporaryDirectory(prefix: "eventgraph-coredata")
    defer { try? removeDirectory(dir) }
    let companies = max(1, rows / (employeesPerCompany + 1))
    let sqlite = dir + "/Company.sqlite"
    let built = try Baselines.measurement(
      "core data store", eg_coredata_build(sqlite, Int64(companies), Int64(employeesPerCompany)))
    let model = dir + "/Company.xcdatamodel"
    try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
    try modelXML.write(toFile: model + "/contents", atomically: true, encoding: .utf8)
    table.add("Core Data store built by SQLite (\(built.operations) rows)", built, unit: "rows/s")

    // The import, its anonymous memory sampled every 10,000 objects.
    var peak = anonymousMemoryBytes()
    let before = peak
    var seen = 0
    let start = monotonicSeconds()
    let result = try CoreDataStoreImport.run(
      store: dir + "/import", model: model, file: sqlite, options: CoreDataStoreImportOptions(batch: batch)
    ) { _, _ in
      seen += 1
      if seen % 10_000 == 0 { peak = max(peak, anonymousMemoryBytes()) }
    }
    let seconds = monotonicSeconds() - start
    let imported = try EventStore(path: dir + "/import", options: StoreOptions(readOnly: true))
    let events = Int(try imported.lastSequence())
    guard result.objects.values.reduce(0, +) == built.operations else {
      throw BaselineError(workload: "coredata", message: "imported \(result.objects) of \(built.operations) rows")
    }

    // The store's own batched appends: the same objects, events and commits, from memory.
    let appended = try EventStore.create(at: dir + "/append", model: imported.model)
    let own = try measure(operations: events) {
      var c = 0
      while c < companies {
        let end = min(companies, c + max(1, batch / (employeesPerCompany + 1)))
        try appended.write { tx in
          for k in (c + 1)...end {
            let company = try tx.insert("Company", ["name": .string("Company \(k)")])
            for e in 0..<employeesPerCompany {
              let n = (k - 1) * employeesPerCompany + e + 1
              let employee = try tx.insert(
                "Employee", ["name": .string("Employee \(n)"), "salary": .int64(Int64(1000 + n))])
              try tx.link(employee, "company", company)
            }
          }
        }
        c = end
      }
    }
    let scan = try Baselines.measurement("sqlite3 scan", eg_coredata_scan(sqlite))
    let rate = Measurement(operations: events, seconds: seconds)
    table.add(
      "import-coredata (\(built.operations) rows, \(events) events, --batch \(batch))", rate, unit: "events/s",
      baseline: own, baselineName: "the store's batched appends of the same objects")
    table.add(
      "import-coredata rows/s vs sqlite3's own full scan of the tables",
      Measurement(operations: built.operations, seconds: seconds), unit: "rows/s", baseline: scan,
      baselineName: "sqlite3 full scan")
    table.add(
      "anonymous memory during import, peak of samples every 10,000 objects", value: mebibytes(peak), unit: "MiB")
    table.add("  before the import", value: mebibytes(before), unit: "MiB")
  }
}
