from placement_cli.launch import main

main()
