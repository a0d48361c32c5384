import Foundation
import Testing

@testable import EventGraph
@testable import EventGraphModel

/// Every code of ``ModelError`` and ``ServiceError``, met as a user meets it: a model
/// document that breaks the rule, a service call that is refused.
///
/// As for `StoreError` (`ErrorCodeCoverageTests`), a code that stops being made fails here,
/// and so does a code added to the source without an entry in its domain's `all`.
@Suite("Every ModelError and ServiceError code is met by what makes it")
struct DomainCodeCoverageTests {
  /// The names declared as `public static var NAME: Self { Self("NAME") }` in a source file.
  static func declaredCodes(_ file: String) throws -> [String] {
    let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("../../Sources/\(file)").standardized
    let text = try String(contentsOf: source, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line -> String? in
      guard let r = line.range(of: "public static var ") else { return nil }
      let name = String(line[r.upperBound...].prefix { $0 != ":" })
      return line.hasSuffix("{ Self(\"\(name)\") }") ? name : nil
    }
  }

  @Test("the lists of codes are the codes declared")
  func listsAreComplete() throws {
    #expect(try Self.declaredCodes("EventGraphModel/Model/ModelError.swift") == ModelError.Code.all.map(\.name))
    #expect(try Self.declaredCodes("EventGraph/Service/ServiceError.swift") == ServiceError.Code.all.map(\.name))
  }

  // MARK: - ModelError

  /// A model document of `entities` (JSON text of the array's elements).
  static func document(_ entities: String) -> [UInt8] {
    Array(#"{"name": "M", "version": 1, "entities": [\#(entities)]}"#.utf8)
  }

  /// The error that building a model of `entities` gives; `nil` when it gives none or another kind.
  static func refusal(_ entities: String) -> ModelError? {
    do {
      _ = try Model(json: document(entities), file: "m.model.json")
      return nil
    } catch {
      return error
    }
  }

  /// An entity `A` with the attributes and relationships given (JSON text) and a plain
  /// entity `B` to point at.
  static func entityA(attributes: String = "", relationships: String = "", extra: String = "") -> String {
    #"{"name": "A", "attributes": [\#(attributes)], "relationships": [\#(relationships)]\#(extra)}, {"name": "B"}"#
  }

  /// What makes `code`.
  static func meet(_ code: ModelError.Code) throws -> ModelError? {
    switch code {
    case .unknownEntity:
      let m = try Model(json: document(entityA()), file: "m.model.json")
      do {
        _ = try m.requireEntity("Nowhere")
        return nil
      } catch { return error }
    case .duplicateEntity: return refusal(#"{"name": "A"}, {"name": "A"}"#)
    case .duplicateProperty:
      return refusal(entityA(attributes: #"{"name": "x", "type": "string"}, {"name": "x", "type": "int32"}"#))
    case .unknownParent: return refusal(#"{"name": "A", "parent": "Nobody"}"#)
    case .inheritanceCycle: return refusal(#"{"name": "A", "parent": "B"}, {"name": "B", "parent": "A"}"#)
    case .unknownDestination:
      return refusal(entityA(relationships: #"{"name": "r", "destination": "Nowhere", "optional": true}"#))
    case .unknownInverse:
      return refusal(entityA(relationships: #"{"name": "r", "destination": "B", "inverse": "back", "optional": true}"#))
    case .inverseMismatch:
      return refusal(
        #"{"name": "A", "attributes": [{"name": "x", "type": "string"}], "relationships": [{"name": "r", "destination": "A", "inverse": "x", "optional": true}]}"#
      )
    case .invalidDefault:
      return refusal(entityA(attributes: #"{"name": "x", "type": "string", "maxLength": 2, "default": "long"}"#))
    case .invalidCounts:
      return refusal(
        entityA(relationships: #"{"name": "r", "destination": "B", "toMany": true, "minCount": 3, "maxCount": 2}"#))
    case .orderedToOne:
      return refusal(entityA(relationships: #"{"name": "r", "destination": "B", "ordered": true, "optional": true}"#))
    case .invalidName: return refusal(#"{"name": "9lives"}"#)
    case .tooLarge:
      let many = (0..<Int(UInt16.max)).map { EntityDescription(name: "E\($0)") }
      do {
        _ = try Model(name: "M", version: 1, entities: many)
        return nil
      } catch { return error as? ModelError }
    case .invalidRule:
      return refusal(entityA(attributes: #"{"name": "x", "type": "string", "regularExpression": "("}"#))
    case .invalidConstraint:
      return refusal(
        entityA(attributes: #"{"name": "x", "type": "string"}"#, extra: #", "uniquenessConstraints": [["y"]]"#))
    case .invalidSubject:
      return refusal(
        entityA(attributes: #"{"name": "x", "type": "string", "personal": true}"#, extra: #", "subject": "missing""#))
    case .invalidFile: return refusal(#"{"name": "A", "colour": "red"}"#)
    default: return nil
    }
  }

  @Test("each ModelError code is made by a model that breaks its rule", arguments: ModelError.Code.all)
  func meetsModelError(_ code: ModelError.Code) throws {
    let e = try #require(try Self.meet(code), "no ModelError for \(code)")
    #expect(e.code == code, "\(e)")
    #expect(!e.description.hasPrefix("model error "), "\(e)")
  }

  // MARK: - ServiceError

  /// The error `body` throws, `nil` when it throws none or another kind.
  static func serviceRefusal(_ body: () async throws -> Void) async -> ServiceError? {
    do {
      try await body()
      return nil
    } catch {
      return error as? ServiceError
    }
  }

  /// What makes `code`, on a store of the service fixtures' model.
  static func meet(_ code: ServiceError.Code, _ store: EventStore) async throws -> ServiceError? {
    switch code {
    case .invalidIdempotencyKey:
      return await serviceRefusal {
        try store.write(metadata: CommitMetadata(idempotencyKey: "")) { tx in
          _ = try tx.insert("Item", ["name": .string("x")])
        }
      }
    case .invalidName: return await serviceRefusal { _ = try store.consumer("a:b") }
    case .projectionAlreadyRegistered:
      try store.register(EntityCountProjection())
      return await serviceRefusal { try store.register(EntityCountProjection()) }
    case .alreadyCommitted:
      // A key given up front makes a retry (a duplicate result); one set inside the body is
      // looked up when it returns, and a repeat is refused.
      try store.write(metadata: CommitMetadata(idempotencyKey: "order-1")) { tx in
        _ = try tx.insert("Item", ["name": .string("a")])
      }
      return await serviceRefusal {
        try store.write { tx in
          tx.metadata.idempotencyKey = "order-1"
          _ = try tx.insert("Item", ["name": .string("b")])
        }
      }
    case .storeClosed:
      // A caller cannot hold a store whose release has begun, so the writer's queue is
      // closed as the store's deinit closes it: a commit then is refused, not left hanging.
      store.service.shutdown()
      return await serviceRefusal { try await store.commit { tx in _ = try tx.insert("Item", ["name": .string("x")]) } }
    case .invalidGroup:
      return await serviceRefusal { _ = try store.consumerGroup("g", member: "m", options: GroupOptions(lease: 0)) }
    case .notParked:
      return await serviceRefusal { try store.retryParked(group: "g", sequence: 1) }
    default: return nil
    }
  }

  @Test("each ServiceError code is made by the call it refuses", arguments: ServiceError.Code.all)
  func meetsServiceError(_ code: ServiceError.Code) async throws {
    let (store, dir) = try makeStore(try ServiceFixtures.model(), label: "service-\(code.name)")
    defer { removeDirectory(dir) }
    let e = try #require(try await Self.meet(code, store), "no ServiceError for \(code)")
    #expect(e.code == code, "\(e)")
    #expect(!e.description.hasPrefix("service error "), "\(e)")
  }
}
