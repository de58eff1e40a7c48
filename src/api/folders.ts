/**
 * The API's folder routes: list, create (by name or by path), rename or
 * move, delete.
 *
 * @module
 */
import { z } from "zod";
import { folderValue, getPerson, listFolders } from "../../projections/catalogue.ts";
import {
  createFolder,
  deleteFolder,
  ensureFolderPath,
  moveFolder,
  renameFolder,
  requireFolder,
} from "../domain/folders.ts";
import { json } from "../http/json.ts";
import { type Route, route } from "./route.ts";

const folderBody = z.object({
  name: z.string().optional().describe("The new folder's name (with parent_id), or leave out and give path"),
  parent_id: z.string().nullable().optional().describe("The parent folder's id; null or absent for the root"),
  path: z.string().optional().describe("A path such as Energy outlooks/Basic; missing folders are made"),
}).strict();
const folderPatch = z.object({
  name: z.string().optional(),
  parent_id: z.string().nullable().optional().describe("Move under this folder; null for the root"),
}).strict();

/** The folder routes, in the order the API page lists them. */
export const FOLDER_ROUTES: Route[] = [
  route("GET", "/api/folders", {
    summary: "Every folder of the caller, by path",
    handle: ({ caller }, s) => {
      const person = getPerson(s.app.db, caller.personId)!;
      return Promise.resolve(json({
        root: folderValue(person.name, null),
        folders: listFolders(s.app.db, caller.personId).map((f) => ({
          id: f.folder_id,
          name: f.name,
          parent_id: f.parent_id,
          path: f.path,
          folder: folderValue(person.name, f.path),
        })),
      }));
    },
  }),
  route("POST", "/api/folders", {
    summary: "Create a folder (name + parent_id) or a path",
    body: folderBody,
    handle: async ({ caller, body, actor }, s) => {
      const b = body as z.infer<typeof folderBody>;
      const folder = b.path !== undefined
        ? await ensureFolderPath(s.app, { personId: caller.personId, path: b.path }, actor)
        : await createFolder(s.app, {
          personId: caller.personId,
          parentId: b.parent_id ?? null,
          name: b.name ?? "",
        }, actor);
      return json(
        { id: folder.folder_id, name: folder.name, parent_id: folder.parent_id, path: folder.path },
        201,
      );
    },
  }),
  route("PATCH", "/api/folders/:id", {
    summary: "Rename or move a folder; its id stays",
    body: folderPatch,
    handle: async ({ caller, body, params, actor }, s) => {
      const b = body as z.infer<typeof folderPatch>;
      requireFolder(s.app.db, caller.personId, params.id!);
      if (b.name !== undefined) {
        await renameFolder(s.app, { personId: caller.personId, folderId: params.id!, name: b.name }, actor);
      }
      if (b.parent_id !== undefined) {
        await moveFolder(
          s.app,
          { personId: caller.personId, folderId: params.id!, parentId: b.parent_id },
          actor,
        );
      }
      const f = requireFolder(s.app.db, caller.personId, params.id!);
      return json({ id: f.folder_id, name: f.name, parent_id: f.parent_id, path: f.path });
    },
  }),
  route("DELETE", "/api/folders/:id", {
    summary: "Delete a folder; one that holds anything needs ?recursive=true",
    handle: async ({ caller, params, url, actor }, s) => {
      await deleteFolder(s.app, {
        personId: caller.personId,
        folderId: params.id!,
        recursive: url.searchParams.get("recursive") === "true",
      }, actor);
      return new Response(null, { status: 204 });
    },
  }),
];
