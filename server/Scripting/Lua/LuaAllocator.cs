using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Diagnostics.Server.Memory;

namespace Diagnostics.Server.Scripting.Lua;

/// <summary>
/// Lua's allocator hook (lua_Alloc) on the tracked allocator: every byte the script VM holds is
/// charged to the thread that ran the script, counted in used_memory (and so under maxmemory), and
/// in the VM's own figure (INFO used_memory_vm_eval) kept in the native counter Lua hands back as
/// the hook's user data.
/// </summary>
internal static unsafe class LuaAllocator
{
    /// <summary>The hook, for lua_newstate.</summary>
    public static delegate* unmanaged[Cdecl]<long*, byte*, nuint, nuint, byte*> Function => &Allocate;

    [UnmanagedCallersOnly(CallConvs = [typeof(CallConvCdecl)])]
    private static byte* Allocate(long* used, byte* block, nuint oldSize, nuint newSize)
    {
        // An exception must not escape into Lua's C frames: a failure is a null, which Lua turns
        // into its own "not enough memory" error.
        try
        {
            if (newSize == 0)
            {
                if (block != null)
                {
                    *used -= TrackedAllocator.ChargedSize(block);
                    TrackedAllocator.Free(block);
                }
                return null;
            }
            if (block != null)
                *used -= TrackedAllocator.ChargedSize(block);
            byte* result = TrackedAllocator.Realloc(block, newSize);
            *used += TrackedAllocator.ChargedSize(result);
            return result;
        }
        catch (Exception ex) when (ex is OutOfMemoryException or BlockTooLargeException or InsufficientMemoryException)
        {
            if (block != null)
                *used += TrackedAllocator.ChargedSize(block); // the old block is still Lua's
            return null;
        }
    }
}
