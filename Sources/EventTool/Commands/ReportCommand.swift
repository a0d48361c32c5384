import EventGraph
import EventGraphReplication
import Foundation

/// `eventtool report`: the store as one self-contained HTML page (Docs/report.md).
struct ReportCommand: ToolCommand {
  let spec = CommandSpec(
    name: "report", abstract: "Write one self-contained HTML page showing the store: model, timeline, objects.",
    discussion:
      "The page needs no network and no server: the summary (identity, versions, commits, file size, truncation, replication role, and with --nats the replication lag and the lease's holder), the objects per entity, the consumers' and consumer groups' lag; the model's diagram as SVG; the commits over time as a plot, with the truncation's base and an upcast's switch marked; and an object browser: an object's history as its changes commit by commit, its state after any of its commits, and the differences from another one highlighted. The page's address fragment picks a view and an object (report.html#view=objects&object=AddressBook/3&at=7&from=5). The browser's data stays within --max-size bytes (objects past it are left out and counted on the page); each object shows its last --max-history commits. --object limits the browser to the subgraph reached from one object along its relationships.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("out", valueName: "FILE", help: "The HTML file to write (replaced if it exists)."),
      OptionSpec("object", valueName: "ID", help: "Browse only the subgraph reached from this object (Entity/N)."),
      OptionSpec(
        "max-size", valueName: "BYTES", help: "The most bytes the object browser's data takes (default 4000000)."),
      OptionSpec("max-history", valueName: "N", help: "The most commits of one object's history shown (default 100)."),
      OptionSpec(
        "nats", valueName: "URLS",
        help: "Ask the replication stream how far behind the store is, and who holds its lease, for the summary."),
    ] + ReplicationOptions.security,
    examples: [
      "eventtool report book.store --out book.html",
      "eventtool report company.store --out acme.html --object Company/1",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    guard let out = a.value("out") else { throw ToolError.usage("give the page's file with --out FILE") }
    var limits = ReportData.Limits()
    if let size = try a.int("max-size") {
      guard size >= 1_000 else { throw ToolError.usage("--max-size needs 1000 bytes or more, not \(size)") }
      limits.maxBytes = size
    }
    if let n = try a.int("max-history") {
      guard n >= 1 else { throw ToolError.usage("--max-history needs 1 or more, not \(n)") }
      limits.maxHistory = n
    }
    let store = try openStore(try a.required("STORE"))
    var data = try ReportData.read(store, root: a.value("object"), limits: limits)
    if a.value("nats") != nil,
      let lag = try ReplicationStatus.read(
        store, jetStream: try ReplicationOptions.connect(a, name: "eventtool report"))
    {
      data.summary.append(("Replication lag", StatsCommand.lagText(lag)))
      data.summary.append(("Primary", StatsCommand.leaseText(lag)))
    }
    let page = ReportPage.html(data, model: store.model)
    do {
      try Data(page.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
    } catch {
      throw ToolError.failed("cannot write \(out): \(error.localizedDescription)")
    }
    io.print(
      "wrote \(out): \(page.utf8.count) bytes, \(data.objects.count) of \(data.objectsConsidered) objects in the browser"
        + (data.objectsLeftOut > 0 ? " (\(data.objectsLeftOut) left out by --max-size)" : ""))
  }
}
