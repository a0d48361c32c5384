import EventGraphCoreData
internal import EventGraphText
import Foundation

struct ImportMappingCommand: ToolCommand {
  let spec = CommandSpec(
    name: "import-mapping", abstract: "Turn a Core Data mapping model into an EventGraph mapping file.",
    discussion: """
      Reads FILE.xcmappingmodel (its xcmapping.xml) and writes the mapping: entity mappings in their order, \
      filters, value expressions ($source key paths; FUNCTION(..., "uppercaseString") and the like where the \
      expression language has them) and relationship mappings. The source and destination versions are numbered \
      as import-model numbers the model's versions; the model is the bundle the mapping names, found by its name \
      beside the mapping or in a folder above it, as Xcode finds it, or --model. An entity mapping with a custom policy class keeps its name under "policy": register a Swift \
      MigrationPolicy under that name, or replace it with declarative "instances".
      """,
    positionals: [PositionalSpec("FILE", help: "The .xcmappingmodel directory (or its xcmapping.xml).")],
    options: [
      OptionSpec("out", valueName: "FILE", help: "The mapping file to write (*.mapping.json).", isRequired: true),
      OptionSpec("model", valueName: "PATH", help: "The model bundle whose versions the mapping maps between."),
      OptionSpec("json", help: "Print what was written, with every note, as one JSON object."),
      OptionSpec(
        "strict", help: "Refuse the mapping, writing nothing, if anything of it would be converted or left out."),
    ],
    examples: ["eventtool import-mapping v1_to_v2.xcmappingmodel --out v1-v2.mapping.json"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let out = a.value("out") ?? ""
    let mapping: ImportedMapping
    do {
      mapping = try CoreDataMappingImport.run(try a.required("FILE"), model: a.value("model"), strict: a.flag("strict"))
    } catch let e as CoreDataError {
      throw ToolError.failed(ToolHints.message(e))
    }
    try Data(mapping.text.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("file", .string(out)), JSONField("source", .int(Int64(mapping.source))),
          JSONField("destination", .int(Int64(mapping.destination))),
          JSONField("entityMappings", .int(Int64(mapping.entityMappings))),
          JSONField("notes", .array(mapping.notes.map { .string($0) })),
        ]).serialized())
      return
    }
    io.print(
      "wrote \(out): \(mapping.entityMappings) entity mappings, version \(mapping.source) -> \(mapping.destination)")
    for n in mapping.notes { io.print("  note: \(n)") }
  }
}
