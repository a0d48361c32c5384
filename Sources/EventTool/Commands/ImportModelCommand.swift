import EventGraphCoreData
internal import EventGraphText

struct ImportModelCommand: ToolCommand {
  let spec = CommandSpec(
    name: "import-model", abstract: "Turn a Core Data model (every version) into EventGraph model files.",
    discussion: """
      PATH is an .xcdatamodeld bundle, one .xcdatamodel (XML 'contents' or Xcode 3's binary 'elements'), \
      a compiled .momd or .mom, or one of those files. Each version becomes DIR/NAME.vN.model.json, N counting \
      from 1 in the natural order of the versions' names (Model, Model 2, ..., Model 10); the current version \
      (.xccurrentversion) is marked. What has no EventGraph meaning (fetched properties, fetch request \
      templates, configurations, derived attributes) is kept in a userInfo where the model file holds one and \
      is listed by name either way. Nothing is written unless every version converts and loads.
      """,
    positionals: [PositionalSpec("PATH", help: "The Core Data model.")],
    options: [
      OptionSpec("out", valueName: "DIR", help: "The directory to write the model files to.", isRequired: true),
      OptionSpec("json", help: "Print the files written as one JSON object."),
      OptionSpec(
        "strict", help: "Refuse the model, writing nothing, if any version would be converted or left out in part."),
    ],
    examples: ["eventtool import-model MyMigration_DataModel.xcdatamodeld --out models"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let files: [ImportedModelFile]
    do {
      files = try CoreDataModelImport.run(try a.required("PATH"), into: a.value("out") ?? ".", strict: a.flag("strict"))
    } catch let e as CoreDataError {
      throw ToolError.failed(ToolHints.message(e))
    }
    if a.flag("json") {
      let list = files.map { f -> JSON in
        .object([
          JSONField("file", .string(f.path)), JSONField("version", .int(Int64(f.version))),
          JSONField("name", .string(f.versionName)), JSONField("source", .string(f.source)),
          JSONField("format", .string(f.format)), JSONField("current", .bool(f.isCurrent)),
          JSONField("entities", .int(Int64(f.entityCount))), JSONField("notes", .array(f.notes.map { .string($0) })),
        ])
      }
      io.print(JSON.object([JSONField("files", .array(list))]).serialized())
      return
    }
    for f in files {
      io.print(
        "wrote \(f.path): \(f.entityCount) entities (\(f.versionName), \(f.format)\(f.isCurrent ? ", current" : ""))")
      for n in f.notes { io.print("  note: \(n)") }
    }
  }
}
