import Foundation
import LMDB
import Testing

@Suite("LMDBError")
struct LMDBErrorTests {
  @Test(
    "the description carries the operation and LMDB's own message",
    arguments: [
      (LMDBError.keyExists.code, "MDB_KEYEXIST: Key/data pair already exists"),
      (LMDBError.invalid.code, "MDB_INVALID: File is not an LMDB file"),
      (LMDBError.mapFull.code, "MDB_MAP_FULL: Environment mapsize limit reached"),
      (LMDBError.noSuchFile.code, "No such file or directory"),
      (LMDBError.permissionDenied.code, "Permission denied"),
      (LMDBError.noSpace.code, "No space left on device"),
      (
        LMDBError.ioError.code, "Input/output error (code 5); LMDB says this of a short write too: the disk may be full"
      ),
    ])
  func description(code: Int32, message: String) {
    let error = LMDBError(code: code, operation: "mdb_something(here)")
    #expect(error.description.contains(message))
    #expect(error.description.contains("mdb_something(here)"))
    #expect(error.description.contains("\(code)"))
  }

  @Test("an error thrown by a real call names the call and says what LMDB said")
  func descriptionFromACall() throws {
    try withTemporaryDirectory { dir in
      let missing = dir + "/missing"
      let error = try #require(#expect(throws: LMDBError.self) { try Environment(path: missing) })
      #expect(error.description.contains("mdb_env_open"))
      #expect(error.description.contains(missing))
      #expect(error.description.contains("No such file or directory"))

      let (env, db) = try openEnvironment(in: dir)
      try env.write { txn throws in
        try txn.put(db, key: BigEndianKey(2), value: [UInt8]())
        let appended = try #require(
          #expect(throws: LMDBError.self) { try txn.put(db, key: BigEndianKey(1), value: [UInt8](), flags: .append) })
        #expect(appended.description.contains("mdb_put"))
        #expect(appended.description.contains("MDB_KEYEXIST"))
      }
    }
  }

  @Test("errors compare by code, whatever the operation")
  func equality() {
    let a = LMDBError(code: LMDBError.mapFull.code, operation: "mdb_put")
    let b = LMDBError(code: LMDBError.mapFull.code, operation: "mdb_txn_commit")
    #expect(a == b)
    #expect(a == .mapFull)
    #expect(a != .keyExists)
    #expect(Set([a, b]).count == 1)
  }

  @Test("the named constants carry LMDB's codes")
  func codes() {
    #expect(LMDBError.keyExists.code == -30799)
    #expect(LMDBError.notFound.code == -30798)
    #expect(LMDBError.invalid.code == -30793)
    #expect(LMDBError.mapFull.code == -30792)
    #expect(LMDBError.noSuchFile.code == 2)
    #expect(LMDBError.permissionDenied.code == 13)
  }
}
