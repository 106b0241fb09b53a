{
  "targets": [
    {
      "target_name": "ddslink",
      "sources": ["ddsLink.c"],
      "include_dirs": ["<(INTERMEDIATE_DIR)"],
      "libraries": ["-lddsc"],
      "cflags_c": ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"],
      "actions": [
        {
          "action_name": "idlc_unitree_hg",
          "inputs": ["unitree_hg.idl"],
          "outputs": ["<(INTERMEDIATE_DIR)/unitree_hg.c", "<(INTERMEDIATE_DIR)/unitree_hg.h"],
          "action": ["idlc", "-o", "<(INTERMEDIATE_DIR)", "unitree_hg.idl"],
          "process_outputs_as_sources": 1,
          "message": "idlc: generating the unitree_hg types"
        },
        {
          "action_name": "idlc_unitree_api",
          "inputs": ["unitree_api.idl"],
          "outputs": ["<(INTERMEDIATE_DIR)/unitree_api.c", "<(INTERMEDIATE_DIR)/unitree_api.h"],
          "action": ["idlc", "-o", "<(INTERMEDIATE_DIR)", "unitree_api.idl"],
          "process_outputs_as_sources": 1,
          "message": "idlc: generating the unitree_api types"
        }
      ]
    }
  ]
}
