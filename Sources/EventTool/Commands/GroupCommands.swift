import EventGraph
internal import EventGraphText
import Foundation

/// `eventtool consumers`: the store's durable consumers and consumer groups.
struct ConsumersCommand: ToolCommand {
  let spec = CommandSpec(
    name: "consumers", abstract: "List the durable consumers and consumer groups, with their positions and lag.",
    discussion:
      "For each consumer (and projection): its saved position and how far the log's end lies beyond it. For each consumer group (Docs/services.md, \"Consumer groups\"): its partitions with their positions and the member holding each lease and until when, the members alive, the lag behind the log's end (from the partition furthest behind) and the number of parked commits ('eventtool parked' shows them).",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [OptionSpec("json", help: "Print them as JSON.")],
    examples: ["eventtool consumers book.store", "eventtool consumers book.store --json"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let store = try openStore(path, writing: false)
    let end = try store.lastSequence()
    let consumers = try store.consumerPositions()
    let groups = try store.consumerGroups()
    if a.flag("json") {
      let c = consumers.map { p in
        JSON.object([
          JSONField("name", .string(p.name)), JSONField("position", .int(Int64(p.position))),
          JSONField("lag", .int(Int64(end - min(end, p.position)))),
        ])
      }
      let g = groups.map { g in
        JSON.object([
          JSONField("name", .string(g.name)), JSONField("lag", .int(Int64(g.lag))),
          JSONField("parked", .int(Int64(g.parked.count))),
          JSONField(
            "members",
            .array(
              g.members.sorted { $0.key < $1.key }.map {
                .object([JSONField("member", .string($0.key)), JSONField("expires", .string(ISO8601.format($0.value)))])
              })),
          JSONField(
            "partitions",
            .array(
              g.partitions.map { p in
                .object([
                  JSONField("index", .int(Int64(p.index))), JSONField("position", .int(Int64(p.position))),
                  JSONField("holder", p.holder.map { .string($0) } ?? .null),
                  JSONField("expires", p.expires.map { .string(ISO8601.format($0)) } ?? .null),
                ])
              })),
        ])
      }
      io.print(
        JSON.object([
          JSONField("end", .int(Int64(end))), JSONField("consumers", .array(c)), JSONField("groups", .array(g)),
        ])
        .serialized())
      return
    }
    if consumers.isEmpty && groups.isEmpty { io.print("\(path) has no consumers and no consumer groups") }
    for p in consumers {
      io.print("consumer \(p.name): position \(p.position), lag \(end - min(end, p.position))")
    }
    for g in groups {
      let members = g.members.keys.sorted().joined(separator: ", ")
      io.print(
        "group \(g.name): \(g.partitions.count) partitions, \(g.members.count) members alive\(members.isEmpty ? "" : " (\(members))"), lag \(g.lag), \(g.parked.count) parked"
      )
      for p in g.partitions {
        let held = p.holder.map { h in "held by \(h) until \(p.expires.map(ISO8601.format) ?? "?")" } ?? "free"
        io.print("  partition \(p.index): position \(p.position), \(held)")
      }
    }
  }
}

/// `eventtool parked`: a consumer group's parked commits, retried or skipped.
struct ParkedCommand: ToolCommand {
  let spec = CommandSpec(
    name: "parked", abstract: "Show a consumer group's parked commits, or retry or skip one.",
    discussion:
      "A commit is parked when its handler failed every attempt; the group went on without it. --retry SEQ has the member holding its partition try it again (it stays parked, its attempts counted on, if it fails again); --skip SEQ forgets it. SEQ is the commit's first sequence, as listed.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."), PositionalSpec("GROUP", help: "The consumer group."),
    ],
    options: [
      OptionSpec("retry", valueName: "SEQ", help: "Try the parked commit at SEQ again."),
      OptionSpec("skip", valueName: "SEQ", help: "Forget the parked commit at SEQ."),
      OptionSpec("json", help: "Print them as JSON."),
    ],
    examples: [
      "eventtool parked book.store send-email", "eventtool parked book.store send-email --retry 4211",
      "eventtool parked book.store send-email --skip 4211",
    ])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let group = try a.required("GROUP")
    let retry = try a.sequence("retry")
    let skip = try a.sequence("skip")
    if retry != nil && skip != nil { throw ToolError.usage("--retry and --skip are two changes: give one") }
    if let sequence = retry ?? skip {
      let store = try openStore(path, writing: true)
      if retry != nil {
        try store.retryParked(group: group, sequence: sequence)
        io.print("group \(group): the commit at sequence \(sequence) will be tried again")
      } else {
        try store.skipParked(group: group, sequence: sequence)
        io.print("group \(group): the commit at sequence \(sequence) is skipped")
      }
      return
    }
    let parked = try openStore(path, writing: false).parkedCommits(group: group)
    if a.flag("json") {
      io.print(
        JSON.array(
          parked.map { c in
            .object([
              JSONField("sequence", .int(Int64(c.sequence))), JSONField("commit", .int(Int64(c.number))),
              JSONField("partition", .int(Int64(c.partition))), JSONField("attempts", .int(Int64(c.attempts))),
              JSONField("error", .string(c.error)), JSONField("parkedAt", .string(ISO8601.format(c.parkedAt))),
              JSONField("retry", .bool(c.retry)),
            ])
          }
        ).serialized())
      return
    }
    io.print("group \(group): \(parked.count) parked commit\(parked.count == 1 ? "" : "s")")
    for c in parked {
      io.print(
        "  sequence \(c.sequence) (commit \(c.number), partition \(c.partition)): \(c.attempts) attempts, parked \(ISO8601.format(c.parkedAt))\(c.retry ? ", to be retried" : ""): \(c.error)"
      )
    }
  }
}
