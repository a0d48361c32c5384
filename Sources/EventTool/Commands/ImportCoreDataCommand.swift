import EventGraphCoreData
internal import EventGraphText

struct ImportCoreDataCommand: ToolCommand {
  let spec = CommandSpec(
    name: "import-coredata", abstract: "Import a Core Data store (SQLite or XML) into a store.",
    discussion: """
      Reads FILE with the version of the Core Data model PATH that fits it (its tables and columns, or its \
      objects' entities and properties, and the entities its metadata names), checks every row, then creates STORE \
      with that version's model when it does not exist and appends the objects with their attributes and \
      relationships, --batch N objects a commit. Rows that break the model (a key naming no row, NULL in a \
      required column, an integer out of range) are listed with their table and Z_PK and the store is refused, \
      unless --lenient skips them. Columns the model does not know are listed and ignored. Importing the same \
      Core Data store (by its UUID) into the store again writes nothing.
      """,
    positionals: [
      PositionalSpec("STORE", help: "The store directory (created when missing)."),
      PositionalSpec("FILE", help: "The Core Data store: a .sqlite file or an XML store."),
    ],
    options: [
      OptionSpec(
        "model", valueName: "PATH",
        help:
          "The Core Data model (.xcdatamodeld, .xcdatamodel, .momd or .mom); given more than once, the current versions of all, merged as Core Data merges an app's models.",
        isRepeatable: true, isRequired: true),
      OptionSpec("version", valueName: "N", help: "Read the store with version N of the model, not the one that fits."),
      OptionSpec("batch", valueName: "N", help: "Objects per commit (10000 when not given)."),
      OptionSpec(
        "lenient", help: "Skip the rows that break the model (they are listed) instead of refusing the store."),
      OptionSpec("json", help: "Print the result and the map from each Core Data object to its identity as JSON."),
      OptionSpec(
        "strict",
        help: "Refuse the store, writing nothing, if reading it would convert or leave out anything (a note)."),
    ],
    examples: [
      "eventtool import-coredata trade.store Model.sqlite --model Model.xcdatamodeld",
      "eventtool import-coredata book.store v1_storedata --model MyMigration_DataModel.xcdatamodeld --json",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let batch = try a.int("batch") ?? 10_000
    if batch < 1 { throw ToolError.usage("--batch needs a positive number, not \(batch)") }
    let version = try a.int("version")
    if let version, version < 1 {
      throw ToolError.usage("--version needs a version number (1 or more), not \(version)")
    }
    let json = a.flag("json")
    var identities: [JSONField] = []
    let result: CoreDataStoreImportResult
    do {
      result = try CoreDataStoreImport.run(
        store: try a.required("STORE"), models: a.values("model"), file: try a.required("FILE"),
        options: CoreDataStoreImportOptions(
          version: version, batch: batch, lenient: a.flag("lenient"), strict: a.flag("strict"))
      ) { coreData, identity in
        if json { identities.append(JSONField(coreData, .string(identity))) }
      }
    } catch let e as CoreDataError {
      throw ToolError.failed(ToolHints.message(e))
    }
    let counts = result.objects.keys.sorted()
    if json {
      io.print(
        JSON.object([
          JSONField("version", .int(Int64(result.version))), JSONField("created", .bool(result.created)),
          JSONField("alreadyImported", .bool(result.alreadyImported)),
          JSONField("commits", .int(Int64(result.commits))),
          JSONField("objects", .object(counts.map { JSONField($0, .int(Int64(result.objects[$0] ?? 0))) })),
          JSONField("skipped", .array(result.skipped.map { .string($0) })),
          JSONField("notes", .array(result.notes.map { .string($0) })), JSONField("identities", .object(identities)),
        ]).serialized())
      return
    }
    if result.alreadyImported {
      io.print("already imported: this Core Data store is in the store; nothing to do")
      return
    }
    io.print(
      "\(result.created ? "created the store and imported" : "imported") with model version \(result.version) "
        + "(\(result.versionName)): \(result.objects.values.reduce(0, +)) objects in \(result.commits) commit(s)")
    for e in counts { io.print("  \(e): \(result.objects[e] ?? 0)") }
    for s in result.skipped { io.print("  skipped: \(s)") }
    for n in result.notes { io.print("  note: \(n)") }
  }
}
