import EventGraph
internal import EventGraphText

struct StatsCommand: ToolCommand {
  let spec = CommandSpec(
    name: "stats",
    abstract:
      "Print counts: commits, events, objects per entity, database sizes, the file, the bytes in use and the free pages.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [OptionSpec("json", help: "Print the figures as JSON.")],
    examples: ["eventtool stats book.store", "eventtool stats book.store --json"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let st = try openStore(try a.required("STORE")).statistics()
    if a.flag("json") {
      io.print(
        JSON.object([
          JSONField("store", .string(st.path)), JSONField("storeID", .string(st.storeID)),
          JSONField("model", .string(st.modelName)), JSONField("version", .int(Int64(st.modelVersion))),
          JSONField("commits", .int(Int64(st.commits))), JSONField("events", .int(Int64(st.events))),
          JSONField("objects", .object(st.objectsPerEntity.map { JSONField($0.entity, .int(Int64($0.count))) })),
          JSONField(
            "databases",
            .object(
              st.databases.map {
                JSONField(
                  $0.name,
                  .object([JSONField("entries", .int(Int64($0.entries))), JSONField("pages", .int(Int64($0.pages)))]))
              })),
          JSONField("mapSize", .int(Int64(st.mapSize))), JSONField("fileSize", .int(Int64(st.fileSize))),
          JSONField("usedSize", .int(Int64(st.usedSize))), JSONField("freePages", .int(Int64(st.freePages))),
          JSONField("pageSize", .int(Int64(st.pageSize))),
        ]).serialized())
      return
    }
    io.print("store    \(st.path) (\(st.storeID))")
    io.print("model    \(st.modelName) v\(st.modelVersion)")
    io.print("log      \(st.commits) commits, \(st.events) events")
    for (e, n) in st.objectsPerEntity { io.print("objects  \(e): \(n)") }
    for (name, entries, pages) in st.databases { io.print("db       \(name): \(entries) entries, \(pages) pages") }
    io.print("file     \(st.fileSize) bytes (\(st.usedSize) in use, map \(st.mapSize) bytes)")
    io.print(
      "free     \(st.freePages) pages (\(st.freePages * st.pageSize) bytes) on the free list, reused by later writes; 'eventtool compact' gives them back"
    )
  }
}
